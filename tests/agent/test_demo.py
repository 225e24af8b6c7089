"""The keyless demonstration: `mlab run house-price --model mlab/demo` end to end, labelled as such."""
import pytest

from agent_helpers import mlab, only_run, result, trace, trace_problems


def test_the_house_price_demonstration_is_scored_and_labelled(tmp_path):
    code, out, err = mlab("run", "house-price", "--model", "mlab/demo", "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    document = result(run_dir)
    assert (document["task"], document["metric"], document["direction"]) == ("house-price", "mae", "lower_is_better")
    assert document["demo"] is True and document["end_reason"] == "final_answer"
    baseline = document["baseline"]
    assert baseline["kind"] == "run" and baseline["measured"] is True and baseline["script"] == "train.py"
    assert 0 < document["score"] < baseline["value"]
    assert document["improvement"] == pytest.approx((baseline["value"] - document["score"]) / baseline["value"])
    assert document["success"] is True and document["failure_mode"] is None
    assert document["models"]["main"] == {"model": "mlab/demo", "params": {}, "source": "option"}
    assert {tier["source"] for name, tier in document["models"].items() if name != "main"} == {"main"}
    assert document["schema_version"] == 2 and document["scoring_s"] > 0
    assert document["provenance"]["litellm_version"] and document["provenance"]["build_digest"]
    lines = out.splitlines()
    assert "DEMONSTRATION by the keyless demo model (not an agent result)" in lines[0]
    assert "DEMONSTRATION by the keyless demo model — not an agent result" in lines
    assert f"mae: {document['score']:.6g} (baseline {baseline['value']:.6g}, " \
           f"improvement {document['improvement']:+.1%}, threshold 10%) -> success" in lines
    assert f"s agent + {document['scoring_s']:.1f}s scoring, " in out
    assert lines[-2:] == [f"result: {run_dir / 'result.json'}",
                          f"next: mlab view {run_dir}  (writes {run_dir / 'view.html'}, the run step by step)"]
    assert "scoring the submission..." in err
    helper_replies = [c["response"] for r in trace(run_dir) for c in r["model"]["calls"] if c["tier"] != "main"]
    assert all(reply.startswith("(demo model") for reply in helper_replies)
    assert trace_problems(run_dir) == []


def test_a_task_without_a_demonstration_lists_runs_the_starter_and_submits(tiny_task, tmp_path):
    code, out, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "Execute Script", "Final Answer"]
    document = result(run_dir)
    assert document["demo"] is True and document["score"] == document["baseline"]["value"]
    assert "DEMONSTRATION" in out.splitlines()[0]
