import { describe, expect, it } from 'vitest';
import { servicesOf } from './ci-services.js';

describe('servicesOf', () => {
  it("reads a GitHub workflow's service containers: their images, or their keys where the image is an expression", () => {
    // coleifer/huey's tests.yaml, and PyMySQL/PyMySQL's test.yaml, whose image is its matrix's.
    const huey = [
      'jobs:',
      '  tests:',
      '    runs-on: ubuntu-latest',
      '    services:',
      '      redis:',
      '        image: redis',
      '        ports:',
      '          - 6379:6379',
      '      postgres:',
      '        image: postgres',
      '        env:',
      '          POSTGRES_USER: postgres',
      '    steps:',
      '      - uses: actions/checkout@v4',
      '      - name: runtests',
      '        run: python runtests.py',
    ].join('\n');
    expect(servicesOf(huey)).toEqual(['redis', 'postgres']);
    const pymysql = ['    services:', '      mysql:', '        image: "${{ matrix.db }}"', '        options: "--name=mysqld"', '', '    steps:', '      - run: pytest'].join('\n');
    expect(servicesOf(pymysql)).toEqual(['mysql']);
    // An image named with its registry, namespace and tag (rq/rq's valkey.yml).
    expect(servicesOf('    services:\n      valkey:\n        image: valkey/valkey:${{ matrix.v }}\n      cache:\n        image: docker.io/library/memcached:1.6-alpine  # for the cache tests\n')).toEqual(['valkey', 'memcached']);
  });

  it("reads GitLab CI's list of service images, plain or as maps, at any depth", () => {
    const gitlab = ['services:', '  - redis:7', '  - name: postgres:16', '    alias: db', 'test:', '  services:', '  - mariadb:11', '  script:', '  - pytest'].join('\n');
    expect(servicesOf(gitlab)).toEqual(['redis', 'postgres', 'mariadb']);
  });

  it('finds none where no block starts services', () => {
    expect(servicesOf('jobs:\n  test:\n    steps:\n      - run: docker run -d redis\n')).toEqual([]);
  });
});
