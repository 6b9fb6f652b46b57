// Object storage (issue 17): a customer's S3 buckets and credentials (storage.s3.*), and the objects
// and multipart uploads the S3 endpoint (infra/s3/) keeps. Object bytes live in the file store
// (`<data dir>/s3`), never here; a row names its file. Keys sort in byte order as S3 lists them: on
// PostgreSQL the key columns use the "C" collation (SQLite's default BINARY already does).
import type { Migration } from '../../platform/db/migrate.js';

export const infraS3: Migration = {
  version: 34,
  name: 'infra s3 object storage',
  up: (t, engine) => {
    const key = engine === 'postgres' ? `${t.text} COLLATE "C"` : t.text;
    return [
      `CREATE TABLE s3_buckets (
        id ${t.id},
        customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
        -- S3's bucket name: unique across the whole endpoint, as S3's namespace is
        name ${t.text} NOT NULL,
        region_id ${t.bigint} NOT NULL DEFAULT 0,
        status ${t.text} NOT NULL DEFAULT 'ACTIVE',
        date_created ${t.bigint} NOT NULL,
        date_modified ${t.bigint} NOT NULL
      )`,
      'CREATE UNIQUE INDEX s3_buckets_name ON s3_buckets (name)',
      'CREATE INDEX s3_buckets_customer ON s3_buckets (customer_id, id)',
      `CREATE TABLE s3_credentials (
        id ${t.id},
        customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
        name ${t.text} NOT NULL,
        access_key ${t.text} NOT NULL,
        -- the secret, sealed under a key derived from the server's secret key (SigV4 needs the secret itself)
        secret_sealed ${t.text} NOT NULL,
        status ${t.text} NOT NULL DEFAULT 'ACTIVE',
        date_created ${t.bigint} NOT NULL,
        date_modified ${t.bigint} NOT NULL
      )`,
      'CREATE UNIQUE INDEX s3_credentials_access_key ON s3_credentials (access_key)',
      'CREATE INDEX s3_credentials_customer ON s3_credentials (customer_id, id)',
      `CREATE TABLE s3_objects (
        id ${t.id},
        bucket_id ${t.bigint} NOT NULL REFERENCES s3_buckets(id),
        object_key ${key} NOT NULL,
        size ${t.bigint} NOT NULL,
        etag ${t.text} NOT NULL,
        content_type ${t.text} NOT NULL,
        -- JSON object of the x-amz-meta-* headers (names lower case)
        metadata ${t.text} NOT NULL,
        file_key ${t.text} NOT NULL,
        -- milliseconds since the epoch
        modified_ms ${t.bigint} NOT NULL
      )`,
      'CREATE UNIQUE INDEX s3_objects_key ON s3_objects (bucket_id, object_key)',
      `CREATE TABLE s3_uploads (
        id ${t.id},
        upload_id ${t.text} NOT NULL,
        bucket_id ${t.bigint} NOT NULL REFERENCES s3_buckets(id),
        object_key ${key} NOT NULL,
        content_type ${t.text} NOT NULL,
        metadata ${t.text} NOT NULL,
        date_created ${t.bigint} NOT NULL
      )`,
      'CREATE UNIQUE INDEX s3_uploads_upload_id ON s3_uploads (upload_id)',
      'CREATE INDEX s3_uploads_bucket ON s3_uploads (bucket_id, id)',
      `CREATE TABLE s3_parts (
        upload_id ${t.bigint} NOT NULL REFERENCES s3_uploads(id),
        part_number ${t.bigint} NOT NULL,
        size ${t.bigint} NOT NULL,
        etag ${t.text} NOT NULL,
        file_key ${t.text} NOT NULL,
        PRIMARY KEY (upload_id, part_number)
      )`,
    ];
  },
};
