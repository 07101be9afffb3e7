/**
 * A conftest that writes `generated.txt` (holding `data`) beside itself when it is imported,
 * before collection, and logs the start of every test to `session.log` there through a file
 * it keeps open for the whole session (flake8's conftest logs to `test-logs-3.11.log` in its
 * rootdir): a suite a warm checkpoint must neither lose the written file of nor share the open
 * file's offset with.
 */
export function writesTreeConftest(data: string): string {
  return `import logging
import os

import pytest

HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "generated.txt"), "w") as handle:
    handle.write(${JSON.stringify(`${data}\n`)})
LOG = logging.getLogger("envgen-fixture-tests")
LOG.addHandler(logging.FileHandler(os.path.join(HERE, "session.log")))
LOG.setLevel(logging.INFO)
LOG.propagate = False


@pytest.fixture(autouse=True)
def logged(request):
    LOG.info("start %s", request.node.name)
`;
}
