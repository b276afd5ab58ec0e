import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { HttpProblem } from './problem.js';

/**
 * JSON is the only request body accepted (anything else is a 415 from Fastify). An empty or absent
 * body reads as `{}`: `POST …/revoke` works whether or not a client sends a content type with it,
 * and a route whose body fields are all optional (rotate) needs none.
 */
export function registerJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new HttpProblem('invalid_json', 'The request body is not valid JSON.'), undefined);
    }
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined) request.body = {};
  });
}
