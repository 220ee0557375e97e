// What the schema setup's messages rest on (storage/transfers/schema-setup.ts): the kind of a failure (which decides
// the advice a gateway logs and `--migrate` prints) and a connection named without its password.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeConnection, schemaFailureKind } from '../../../storage/transfers/schema-setup.js';
import { SchemaTooNewError } from '../../../storage/transfers/schema.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('schemaFailureKind: no rights, no connection, a newer schema, anything else', () => {
  assert.equal(schemaFailureKind(withCode('42501', 'permission denied for database appdb')), 'rights');
  assert.equal(schemaFailureKind(new SchemaTooNewError(9)), 'too-new');
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', '3D000', '57P03', '08006', '28P01', '28000']) assert.equal(schemaFailureKind(withCode(code)), 'connection', code);
  assert.equal(schemaFailureKind(new Error('Connection terminated due to connection timeout')), 'connection');
  assert.equal(schemaFailureKind(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' })), 'connection', 'every address refused');
  assert.equal(schemaFailureKind(withCode('42P07', 'relation "ethtxs" already exists')), 'other');
  assert.equal(schemaFailureKind('odd'), 'other');
});

test('describeConnection: the URL without its password, or the key=value fields with the PG* variables named', () => {
  assert.equal(describeConnection({ connectionString: 'postgres://app:s3cret@db.example:5433/eth' }), 'postgres://app@db.example:5433/eth');
  assert.equal(describeConnection({ database: 'eth', user: 'app', password: 's3cret' }), 'host=$PGHOST port=$PGPORT dbname=eth user=app');
  assert.doesNotMatch(describeConnection({ connectionString: 'postgresql://u:p%40ss@h/d' }), /p%40ss|p@ss/);
});
