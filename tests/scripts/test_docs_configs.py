"""README's executor configs are the files the tests run: the JSON block under
"Run it on a GPU box" is examples/executors/local-gpus.json (which the
fake-GPU test, tests/cli/executor_cli_test.cpp, starts from) and the one under
"Run it on a Slurm cluster" is examples/executors/slurm.json (which
tests/slurm/test_slurm.py starts from). Compared as parsed JSON, so layout
may differ but no field may."""
import json
import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def json_block_under(heading):
    text = (ROOT / "README.md").read_text()
    start = text.find("\n## " + heading + "\n")
    if start < 0:
        raise AssertionError("README.md has no section '## %s'" % heading)
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    if len(blocks) != 1:
        raise AssertionError("README.md '## %s' has %d json blocks, not 1" % (heading, len(blocks)))
    return json.loads(blocks[0])


class DocsConfigs(unittest.TestCase):
    def test_gpu_box_config_is_the_example(self):
        example = json.loads((ROOT / "examples" / "executors" / "local-gpus.json").read_text())
        self.assertEqual(json_block_under("Run it on a GPU box"), example)

    def test_slurm_config_is_the_example(self):
        example = json.loads((ROOT / "examples" / "executors" / "slurm.json").read_text())
        self.assertEqual(json_block_under("Run it on a Slurm cluster"), example)

    def test_systemd_unit_named_in_readme_exists(self):
        text = (ROOT / "README.md").read_text()
        paths = re.findall(r"\((scripts/systemd/[^)]+)\)", text)
        self.assertTrue(paths, "README.md links no systemd unit")
        for path in paths:
            self.assertTrue((ROOT / path).is_file(), path)


if __name__ == "__main__":
    unittest.main()
