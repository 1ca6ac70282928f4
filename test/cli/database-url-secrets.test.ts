/**
 * A PostgreSQL URL's query never shows in a message (`?options=-c …` can carry a password), and
 * PostgreSQL refusing a setting the URL passes is a configuration error (78), not "a bug" (70).
 */
import { describe, expect, it } from 'vitest';
import { mapDatabaseError } from '../../src/cli/admin/database.js';
import { ConfigError, formatError } from '../../src/cli/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import * as server from '../../src/server/index.js';
import { displayLocation, scrubLocation } from '../../src/server/store/location.js';

const URL_WITH_SECRET = 'postgres://govctl@127.0.0.1:5432/gov?options=-c%20search_path%3DTOPSECRET42&sslmode=disable';

describe('a PostgreSQL URL in messages', () => {
  it('shows every query value masked, and scrubs the values out of any text', () => {
    expect(displayLocation(URL_WITH_SECRET)).toBe('postgres://govctl@127.0.0.1:5432/gov?options=***&sslmode=***');
    expect(scrubLocation('invalid value for parameter "search_path": "TOPSECRET42"', URL_WITH_SECRET)).not.toContain('TOPSECRET42');
  });

  it('maps a setting PostgreSQL refuses to 78 without quoting the query', () => {
    const driver = Object.assign(new Error('invalid value for parameter "search_path": "TOPSECRET42"'), { code: '22023' });
    const mapped = mapDatabaseError(driver, URL_WITH_SECRET, server);
    expect(mapped).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(mapped)).toBe(78);
    const text = formatError(mapped, false);
    expect(text).not.toContain('TOPSECRET42');
    expect(text).toContain("check the URL's query");
  });
});
