import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EnvgenError, describeError, isEnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { IsSolvedOptions } from '@envgen/rewards';
import type { GoldCacheOptions } from './gold-cache.js';
import { readBatchItems, readInjectorRequest, readOutcomeRequest, readScoreRequest } from './read-request.js';
import type { ReadResult } from './read-request.js';
import { createRewardService } from './reward-service.js';
import type { ApiError, RewardService, ServiceResult } from './reward-service.js';

/** The port `envgen serve` listens on unless told otherwise. */
export const DEFAULT_REWARD_PORT = 8750;

/** Options of {@link startRewardServer}. */
export interface RewardServerOptions {
  /** envgen's home; the pool is `<home>/pool`. The server opens it and closes it on shutdown. */
  home: string;
  /** Interface to bind; default `127.0.0.1` (loopback only). */
  host?: string;
  /** Default {@link DEFAULT_REWARD_PORT}; 0 picks a free port. */
  port?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /** Most items of one `/v1/score/batch` request; default 1000. */
  maxBatchItems?: number;
  /** When a scored rollout counts as solved; default entity F1 = 1. */
  solve?: IsSolvedOptions;
  goldCache?: GoldCacheOptions;
  /** How long shutdown waits for in-flight requests before cutting connections; default 10 s. */
  shutdownTimeoutMs?: number;
  /** Gets one `request` line per request (method, path, status, ms, instance_id) and the lifecycle lines. */
  logger?: Logger;
  /**
   * HTML pages served on GET beside the API, by path (e.g. `/report`), each rendered anew per
   * request, behind the same token. They are sent with a content security policy that allows
   * no script and no request: a page must hold everything it shows.
   */
  pages?: Record<string, () => Promise<string>>;
}

/** A running reward server. */
export interface RewardServer {
  /** `http://host:port`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (answered with
   * `Connection: close`), closes idle keep-alive connections, then closes the pool.
   * Connections still open after the shutdown timeout are cut. Idempotent.
   */
  close(): Promise<void>;
  /** Settles once the server and its pool are closed, however the shutdown started. */
  readonly closed: Promise<void>;
}

type Handler = (request: IncomingMessage, body: unknown, params: RouteParams) => Reply;
interface RouteParams {
  instanceId?: string;
}
interface Reply {
  status: number;
  body: unknown;
  /** Logged with the request line. */
  instanceId?: string;
  items?: number;
}
interface Route {
  method: 'GET' | 'POST';
  handler: Handler;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
const PAGE_HEADERS = { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:" } as const;
const STATS_PATH = /^\/v1\/instances\/([^/]+)\/stats$/;

function errorReply(error: ApiError, instanceId?: string): Reply {
  const { status, ...rest } = error;
  return { status, body: { error: rest }, ...(instanceId === undefined ? {} : { instanceId }) };
}

function invalid(fault: { field: string; message: string }): Reply {
  return errorReply({ status: 400, code: 'invalid-request', message: fault.message, field: fault.field });
}

function reply<T>(result: ServiceResult<T>, instanceId?: string): Reply {
  if (!result.ok) return errorReply(result.error, instanceId);
  return { status: 200, body: result.value, ...(instanceId === undefined ? {} : { instanceId }) };
}

function withRequest<T>(read: ReadResult<T>, run: (request: T) => Reply): Reply {
  return read.ok ? run(read.value) : invalid(read.fault);
}

function buildRoutes(service: RewardService, maxBatchItems: number): Map<string, Route> {
  return new Map<string, Route>([
    ['/v1/health', { method: 'GET', handler: () => ({ status: 200, body: service.health() }) }],
    [
      '/v1/score',
      {
        method: 'POST',
        handler: (_request, body) =>
          withRequest(readScoreRequest(body), (request) =>
            reply(service.score(request), request.gold.kind === 'instance' ? request.gold.instanceId : undefined),
          ),
      },
    ],
    [
      '/v1/score/batch',
      {
        method: 'POST',
        handler: (_request, body) =>
          withRequest(readBatchItems(body, maxBatchItems), (items) => ({ status: 200, body: service.scoreBatch(items), items: items.length })),
      },
    ],
    [
      '/v1/injector-reward',
      {
        method: 'POST',
        handler: (_request, body) =>
          withRequest(readInjectorRequest(body), (request) => reply(service.injectorReward(request), request.kind === 'instance' ? request.instanceId : undefined)),
      },
    ],
    [
      '/v1/outcomes',
      { method: 'POST', handler: (_request, body) => withRequest(readOutcomeRequest(body), (request) => reply(service.recordOutcome(request), request.instanceId)) },
    ],
    [
      '/v1/instances/:id/stats',
      {
        method: 'GET',
        handler: (_request, _body, params) => {
          const id = params.instanceId ?? '';
          return reply(service.stats(id), id);
        },
      },
    ],
  ]);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares the presented bearer token with the expected one in time independent of where they differ (both are hashed to equal length first). */
function makeAuthorizer(token: string | undefined): (header: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (header) => {
    if (header === undefined) return false;
    const match = /^Bearer[ ]+(.+)$/i.exec(header.trim());
    if (match === null) return false;
    return timingSafeEqual(digest(match[1] ?? ''), expected);
  };
}

type BodyRead = { ok: true; text: string } | { ok: false; status: 413 | 400; message: string };

function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  const tooLarge: BodyRead = { ok: false, status: 413, message: `the request body is larger than ${limit} bytes; send smaller batches` };
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(tooLarge);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyRead): void => {
      if (done) return;
      done = true;
      request.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(tooLarge);
      else chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => finish({ ok: true, text: chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8') }));
    request.once('error', (error) => finish({ ok: false, status: 400, message: `the request body could not be read: ${describeError(error)}` }));
    // A client gone before the end of its body: nothing will be answered, but the handler ends.
    request.once('close', () => finish({ ok: false, status: 400, message: 'the connection closed before the request body ended' }));
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  if (text.trim() === '') {
    return { ok: false, reply: errorReply({ status: 400, code: 'invalid-json', message: 'the request body is empty; send a JSON object' }) };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reply: errorReply({ status: 400, code: 'invalid-json', message: `the request body is not valid JSON (${describeError(error)}); send a JSON object` }) };
  }
}

function internalError(error: unknown): Reply {
  const code = isEnvgenError(error) ? error.code : 'internal';
  return errorReply({ status: 500, code, message: isEnvgenError(error) ? error.message : `internal error: ${describeError(error)}` });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      const hint =
        error.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is in use; pass another --port (0 picks a free one)`
          : `cannot listen on ${host}:${port} (${describeError(error)}); check --host and --port`;
      reject(new EnvgenError('usage', hint, { cause: error }));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Opens the pool under `options.home` and serves the reward API on node:http:
 * `GET /v1/health`, `POST /v1/score`, `POST /v1/score/batch`, `POST /v1/injector-reward`,
 * `POST /v1/outcomes`, `GET /v1/instances/:id/stats`. Every answer is JSON; errors are
 * `{"error": {code, message, field?}}` with 400 (bad input, naming the field), 401, 404,
 * 405, 409 (no task / untried), 413 or 500.
 */
export async function startRewardServer(options: RewardServerOptions): Promise<RewardServer> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const pool = openPool(options.home, { logger });
  let service: RewardService;
  try {
    service = createRewardService(pool, { ...(options.solve ? { solve: options.solve } : {}), ...(options.goldCache ? { goldCache: options.goldCache } : {}) });
  } catch (error) {
    pool.close();
    throw error;
  }
  const routes = buildRoutes(service, options.maxBatchItems ?? 1000);
  const authorized = makeAuthorizer(options.token);
  let closing = false;

  const pages = new Map(Object.entries(options.pages ?? {}));

  const sendPage = (response: ServerResponse, started: number, request: IncomingMessage, path: string, html: string): void => {
    const headers: Record<string, string | number> = { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(html) };
    if (closing) headers['connection'] = 'close';
    response.writeHead(200, headers);
    response.end(html);
    logger.info('request', { method: request.method, path, status: 200, ms: Math.round((performance.now() - started) * 1000) / 1000 });
  };

  const send = (response: ServerResponse, started: number, request: IncomingMessage, path: string, result: Reply, extra: Record<string, string> = {}): void => {
    const text = JSON.stringify(result.body);
    const headers: Record<string, string | number> = { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text), ...extra };
    if (closing) headers['connection'] = 'close';
    response.writeHead(result.status, headers);
    response.end(text);
    logger.info('request', {
      method: request.method,
      path,
      status: result.status,
      ms: Math.round((performance.now() - started) * 1000) / 1000,
      ...(result.instanceId === undefined ? {} : { instance_id: result.instanceId }),
      ...(result.items === undefined ? {} : { items: result.items }),
    });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const started = performance.now();
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!authorized(request.headers.authorization)) {
      send(response, started, request, path, errorReply({ status: 401, code: 'unauthorized', message: 'this server needs a bearer token: send Authorization: Bearer <token>' }), {
        'www-authenticate': 'Bearer',
      });
      return;
    }
    const page = pages.get(path);
    if (page !== undefined) {
      if (request.method === 'GET') sendPage(response, started, request, path, await page());
      else send(response, started, request, path, errorReply({ status: 405, code: 'method-not-allowed', message: `${path} takes GET, not ${request.method ?? '?'}` }), { allow: 'GET' });
      return;
    }
    let route = routes.get(path);
    const params: RouteParams = {};
    if (route === undefined) {
      const match = STATS_PATH.exec(path);
      if (match !== null) {
        try {
          params.instanceId = decodeURIComponent(match[1] ?? '');
        } catch {
          send(response, started, request, path, errorReply({ status: 400, code: 'invalid-request', message: 'the instance id in the path is not valid percent-encoding', field: 'id' }));
          return;
        }
        route = routes.get('/v1/instances/:id/stats');
      }
    }
    if (route === undefined) {
      send(response, started, request, path, errorReply({ status: 404, code: 'not-found', message: `no endpoint ${path}; see GET /v1/health, POST /v1/score, /v1/score/batch, /v1/injector-reward, /v1/outcomes, GET /v1/instances/:id/stats${[...pages.keys()].map((page) => `, GET ${page}`).join('')}` }));
      return;
    }
    if (request.method !== route.method) {
      send(
        response,
        started,
        request,
        path,
        errorReply({ status: 405, code: 'method-not-allowed', message: `${path} takes ${route.method}, not ${request.method ?? '?'}` }),
        { allow: route.method },
      );
      return;
    }
    let body: unknown;
    if (route.method === 'POST') {
      const read = await readBody(request, maxBodyBytes);
      if (!read.ok) {
        // An unread body cannot be skipped safely on a kept-alive connection: close it.
        const connection: Record<string, string> = read.status === 413 ? { connection: 'close' } : {};
        send(response, started, request, path, errorReply({ status: read.status, code: read.status === 413 ? 'payload-too-large' : 'invalid-request', message: read.message }), connection);
        return;
      }
      const parsed = parseJson(read.text);
      if (!parsed.ok) {
        send(response, started, request, path, parsed.reply);
        return;
      }
      body = parsed.value;
    }
    send(response, started, request, path, route.handler(request, body, params));
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      logger.error('request failed', { method: request.method, path: request.url, error: describeError(error) });
      if (!response.headersSent) send(response, performance.now(), request, request.url ?? '/', internalError(error));
      else response.destroy();
    });
  });
  // Bounds a client that trickles its headers or body.
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;

  try {
    await listen(server, options.port ?? DEFAULT_REWARD_PORT, host);
  } catch (error) {
    pool.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info('reward server listening', { url, pool: pool.dir, auth: options.token === undefined ? 'none' : 'bearer' });
  if (options.token === undefined && host !== '127.0.0.1' && host !== '::1' && host !== 'localhost') {
    logger.warn('reward server is reachable from other machines without a token; pass --token or set ENVGEN_SERVE_TOKEN', { host });
  }

  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing$: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing$ ??= new Promise<void>((resolve) => {
      closing = true;
      logger.info('reward server shutting down: finishing in-flight requests', { url });
      const timer = setTimeout(() => {
        logger.warn('reward server shutdown timed out; closing the remaining connections', { url });
        server.closeAllConnections();
      }, options.shutdownTimeoutMs ?? 10_000);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        pool.close();
        logger.info('reward server stopped', { url });
        resolveClosed();
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing$;
  };

  return { url, host, port, close, closed };
}

/**
 * Closes `server` gracefully on any of `signals` (default SIGINT and SIGTERM; later
 * signals wait for the same shutdown, bounded by its timeout). Returns a function that
 * removes the handlers; they are removed once the server has closed, too.
 */
export function closeOnSignals(server: RewardServer, options: { signals?: NodeJS.Signals[]; logger?: Logger } = {}): () => void {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const logger = options.logger ?? silentLogger;
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info('reward server got a signal', { signal });
    void server.close();
  };
  for (const signal of signals) process.on(signal, onSignal);
  const remove = (): void => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  void server.closed.then(remove);
  return remove;
}
