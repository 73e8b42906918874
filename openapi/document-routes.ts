import { Router } from 'express';
import { renderDocument, type OpenApiDocument } from './document';

/** Serves an OpenAPI document, rendered once, at `{at}/openapi.json` and `{at}/openapi.yaml`. */
export function documentRoutes(document: OpenApiDocument, at = ''): Router {
  const { json, yaml } = renderDocument(document);
  const router = Router();
  router.get(`${at}/openapi.json`, function openApiJson(_req, res) {
    res.type('application/json').set('Cache-Control', 'public, max-age=300').send(json);
  });
  router.get(`${at}/openapi.yaml`, function openApiYaml(_req, res) {
    res.type('application/yaml').set('Cache-Control', 'public, max-age=300').send(yaml);
  });
  return router;
}
