// Moved to @meld/db: the probes app parses audience filters against the same catalogue.
export { FilterCatalogueRepository } from '@meld/db';
