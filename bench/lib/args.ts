/** `--name value` / `--flag` arguments after the scenario name. */
export class Args {
  private readonly values = new Map<string, string | true>();

  constructor(argv: readonly string[]) {
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i];
      if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}" (options are --name value)`);
      const [name, inline] = a.slice(2).split('=', 2);
      if (inline !== undefined) this.values.set(name, inline);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) this.values.set(name, argv[++i]);
      else this.values.set(name, true);
    }
  }

  int(name: string, fallback: number): number {
    const v = this.values.get(name);
    if (v === undefined) return fallback;
    const n = Number(String(v).replace(/[_,]/g, ''));
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} wants a positive integer, got "${String(v)}"`);
    return n;
  }

  /** `--name 1`, `--name 0` or a bare `--name` (true); anything else is refused. */
  bool(name: string, fallback: boolean): boolean {
    const v = this.values.get(name);
    if (v === undefined) return fallback;
    if (v === true || v === '1') return true;
    if (v === '0') return false;
    throw new Error(`--${name} wants 0 or 1, got "${v}"`);
  }

  string(name: string): string | undefined {
    const v = this.values.get(name);
    return v === true ? undefined : v;
  }

  flag(name: string): boolean {
    return this.values.has(name);
  }
}
