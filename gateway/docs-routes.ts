import { Router } from 'express';
import { renderDocument, type OpenApiDocument } from '../openapi/document';

/** The public OpenAPI document, rendered once, as JSON and YAML. */
export function docsRoutes(document: OpenApiDocument): Router {
  const { json, yaml } = renderDocument(document);
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').set('Cache-Control', 'public, max-age=300').send(json);
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').set('Cache-Control', 'public, max-age=300').send(yaml);
  });
  return router;
}
