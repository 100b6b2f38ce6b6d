// Lints code snippets as if they were files of the repository, in one ESLint process: the
// boundary spec asks about a dozen snippets, and each `eslint --stdin` paid ESLint's and the
// Nx rule's start-up (~2.5 s) again. Reads [{ file, code }] on stdin, writes each snippet's
// messages as JSON. ESM because ESLint's flat config is, which Jest's VM cannot import.
import { ESLint } from 'eslint';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve(text));
}));
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const { file, code } of input) {
  const [result] = await eslint.lintText(code, { filePath: file });
  out.push(result.messages.map((m) => ({ ruleId: m.ruleId, message: m.message })));
}
process.stdout.write(JSON.stringify(out));
