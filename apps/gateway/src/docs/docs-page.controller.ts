import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Controller, Get, Header, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@meld/api';
import type { FastifyReply } from 'fastify';

/**
 * swagger-ui-dist files the page needs; anything else under /docs/assets is 404 (no path
 * walking). A Map: the name comes from the URL (`constructor` must not find a member, ADR 0124).
 */
const ASSETS = new Map<string, string>([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Meld API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so the page can run under a CSP without 'unsafe-inline' scripts.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'";

/**
 * `/docs`: Swagger UI over `/v1/openapi.json`, with swagger-ui-dist served from
 * node_modules by the gateway itself: the machines Meld runs on may be offline (no CDN).
 */
@ApiExcludeController()
@Controller('docs')
export class DocsPageController {
  private readonly root = dirname(require.resolve('swagger-ui-dist/package.json'));
  private readonly files = new Map<string, Promise<Buffer>>();

  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', CSP)
  page(): string {
    return PAGE;
  }

  @Get('assets/init.js')
  @Header('content-type', 'application/javascript; charset=utf-8')
  init(): string {
    return INIT;
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Res() reply: FastifyReply) {
    const type = ASSETS.get(file);
    if (!type) throw new NotFoundException(`no such asset: ${file}`);
    if (!this.files.has(file)) this.files.set(file, readFile(join(this.root, file)));
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(await this.files.get(file));
  }
}
