"""`make test-browser`'s own parts that need no browser: the missing-Chromium message, the counts it
expects from a notebook, and how it says what a save changed. The browser run checks itself: it must
catch a fault planted in a copy of lesson 00 before it opens the lessons."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("browser_check", ROOT / "tools" / "browser_check.py")
bc = sys.modules.setdefault("browser_check", importlib.util.module_from_spec(spec))
spec.loader.exec_module(bc)


def test_without_chromium_it_fails_with_the_line_to_run(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bc, "CHROMIUM", tmp_path / "chromium")
    assert bc.main([]) == 2
    err = capsys.readouterr().err
    assert (
        "apt-get install -y chromium chromium-driver" in err and str(tmp_path / "chromium") in err
    )


def test_it_counts_the_pictures_and_widget_text_views_a_notebook_commits():
    nb = json.loads((ROOT / "solutions" / "06_does_reflection_pay.ipynb").read_text())
    assert bc.committed_pictures(nb) == 3  # the frontier, the fair test's curves, both sizes'
    views = bc.committed_widgets(
        json.loads((ROOT / "solutions" / "03b_judging_the_critics.ipynb").read_text())
    )
    assert len(views) == 1 and all(v.startswith("[interactive:") for v in views)


def test_every_planted_fault_is_a_change_the_lessons_do_not_have():
    lesson = json.loads((ROOT / "notebooks" / "00_first_call.ipynb").read_text())
    for fault, (plant, _) in bc.PLANTED.items():
        assert plant(json.loads(json.dumps(lesson))) != lesson, fault


def test_a_save_that_changed_a_cell_names_the_cell_and_what_it_holds_now():
    old = {
        "metadata": {},
        "cells": [
            {
                "id": "a1",
                "cell_type": "code",
                "outputs": [
                    {"output_type": "display_data", "data": {"text/vnd.mermaid": "graph TD;"}}
                ],
            }
        ],
    }
    new = json.loads(json.dumps(old))
    new["cells"][0]["outputs"][0]["data"]["image/svg+xml"] = "<svg/>"
    said = bc.describe(json.dumps(old).encode(), json.dumps(new).encode())
    assert said == "cell 0 (a1): ['outputs'] (outputs now [['image/svg+xml', 'text/vnd.mermaid']])"
    assert bc.describe(b'{"metadata": {}, "cells": []}', b'{"cells": [], "metadata": {}}').endswith(
        "(formatting)"
    )


def test_a_save_that_changed_the_metadata_names_the_keys_that_changed():
    old = {
        "metadata": {"kernelspec": {"name": "python3"}, "language_info": {"name": "python"}},
        "cells": [],
    }
    new = {
        "metadata": {"kernelspec": {"name": "other"}, "language_info": {"name": "python"}},
        "cells": [],
    }
    assert (
        bc.describe(json.dumps(old).encode(), json.dumps(new).encode()) == "metadata ['kernelspec']"
    )
