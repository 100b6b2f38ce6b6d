import { ApiExcludeController, HTML_PAGE_HEADERS } from '@meld/api';
import { InternalPublic } from '@meld/auth';
import { Controller, Get, Header, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LinkEvents } from './link-events';
import { LinksRepository } from './links.repository';
import { LINK_CODE } from './text-template';
import { UNSUBSCRIBE_STYLESHEET, confirmPage, donePage, messagePage } from './unsubscribe-pages';

/**
 * The public link routes, anonymous, reached through the gateway's link door (ADR 0182):
 * `GET /l/{code}` 302 to the short link's target and records a click; `GET /u/{code}` shows
 * the unsubscribe confirmation, and only its `POST` records the opt-out, so a link preview
 * fetching the URL unsubscribes nobody. The code is the capability: no cookie, no CSRF token
 * (a browser that blocks cookies must be able to opt out; ADR 0182 amended).
 */
@ApiExcludeController()
@InternalPublic()
@Controller()
export class LinksController {
  constructor(
    private readonly events: LinkEvents,
    private readonly links: LinksRepository,
  ) {}

  @Get('l/:code')
  async click(@Param('code') code: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const url = LINK_CODE.test(code) ? await (req.method === 'HEAD' ? this.target(code) : this.events.click(code)) : null;
    if (!url) return this.html(reply, 404, messagePage('Link not found', 'This link does not exist or has expired.'));
    return reply.code(302).header('location', url).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
  }

  /**
   * The target of a short link without a click (ADR 0182): a HEAD, which Fastify answers with the
   * GET route, comes from link checkers and previews, not from a person following the link.
   */
  private async target(code: string): Promise<string | null> {
    return (await this.links.find(code, 'short'))?.url ?? null;
  }

  @Get('u/page.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'public, max-age=3600')
  stylesheet() {
    return UNSUBSCRIBE_STYLESHEET;
  }

  @Get('u/:code')
  async show(@Param('code') code: string, @Res() reply: FastifyReply) {
    const link = LINK_CODE.test(code) ? await this.links.find(code, 'unsubscribe') : null;
    if (!link) return this.html(reply, 404, messagePage('Link not found', 'This unsubscribe link does not exist.'));
    if (link.confirmedAt) return this.html(reply, 200, donePage(link.senderName));
    return this.html(reply, 200, confirmPage(code, link.senderName, link.destination));
  }

  @Post('u/:code')
  async confirm(@Param('code') code: string, @Res() reply: FastifyReply) {
    if (!LINK_CODE.test(code)) return this.html(reply, 404, messagePage('Link not found', 'This unsubscribe link does not exist.'));
    const link = await this.events.unsubscribe(code);
    if (!link) return this.html(reply, 404, messagePage('Link not found', 'This unsubscribe link does not exist.'));
    return this.html(reply, 200, donePage(link.senderName));
  }

  private html(reply: FastifyReply, status: number, body: string) {
    return reply.code(status).headers(HTML_PAGE_HEADERS).send(body);
  }
}
