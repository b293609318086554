// Validates speedscope files against the JSON schema that speedscope's own npm package
// ships (dist/release/file-format-schema.json), with Ajv (JSON Schema draft-07, the
// schema's dialect). Usage: node validate.mjs FILE…
// Prints one line per file; exits 0 when every file is valid, 1 when one is not, and 2
// when the packages are missing (install them with `npm ci` in this directory; .ci/run
// does).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let Ajv;
let schemaPath;
try {
  Ajv = require('ajv');
  schemaPath = require.resolve('speedscope/dist/release/file-format-schema.json');
} catch (e) {
  console.error(
    `speedscope's schema or Ajv is not installed (${e.code ?? e.message}): ` +
      'run `npm ci` in crates/memlens/tests/export/speedscope (.ci/run does)',
  );
  process.exit(2);
}

const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
const version = JSON.parse(
  readFileSync(require.resolve('speedscope/package.json'), 'utf8'),
).version;

let failed = false;
for (const file of process.argv.slice(2)) {
  const document = JSON.parse(readFileSync(file, 'utf8'));
  if (validate(document)) {
    console.log(`${file}: valid (speedscope ${version} schema)`);
  } else {
    failed = true;
    console.log(`${file}: invalid (speedscope ${version} schema)`);
    for (const error of validate.errors.slice(0, 20)) {
      console.log(`  ${error.instancePath || '/'} ${error.message}`);
    }
  }
}
process.exit(failed ? 1 : 0);
