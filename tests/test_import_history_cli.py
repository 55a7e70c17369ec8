"""`supamem import-history FILE`: messages from another store into existing conversations, in
batches that are each stored whole or not at all; a refused batch says where to start again, and a
batch whose reply was lost says it may be stored."""

from __future__ import annotations

import json
from uuid import uuid4

from client_helpers import run_cli
from db_proxy import db_proxy
from psycopg.conninfo import conninfo_to_dict, make_conninfo


def _conversations(client_db, n: int) -> list[str]:
    user = client_db.call_value("user_id_for", external_id=f"import-cli-{uuid4().hex[:8]}")
    return [str(client_db.call_one("create_conversation", user_id=user)["id"]) for _ in range(n)]


def _turns(postgres_conn, conversation: str) -> list[tuple[int, str, str]]:
    return [tuple(r) for r in postgres_conn.execute(
        "select turn_number, role, content from memory.messages where conversation_id = %s order by turn_number, role desc",
        (conversation,),
    )]


def test_import_history_in_batches(client_db, postgres_conn, tmp_path):
    a, b = _conversations(client_db, 2)
    lines = [
        {"conversation_id": a, "role": "user", "content": "Where should I run?"},
        {"conversation_id": b, "role": "user", "content": "Bread recipe?", "created_at": "2024-03-01T09:00:00Z"},
        {"conversation_id": a, "role": "assistant", "content": "Along the river."},
        {"conversation_id": b, "role": "assistant", "content": "Flour, water, salt."},
        {"conversation_id": a, "role": "user", "content": "How far?"},
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    done = run_cli(client_db.url, "import-history", "--batch", "2", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"imported": 5, "conversations": 2}
    assert _turns(postgres_conn, a) == [(1, "user", "Where should I run?"), (1, "assistant", "Along the river."),
                                        (2, "user", "How far?")]
    assert _turns(postgres_conn, b) == [(1, "user", "Bread recipe?"), (1, "assistant", "Flour, water, salt.")]


def test_a_refused_batch_stores_nothing_and_says_where_to_start(client_db, postgres_conn, tmp_path):
    (a,) = _conversations(client_db, 1)
    messages = [{"conversation_id": a, "role": role, "content": f"message {i}"}
                for i, role in enumerate(["user", "assistant", "user", "assistant"])]
    messages[3]["turn"] = 2  # not a field of a message
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    done = run_cli(client_db.url, "import-history", "--batch", "2", str(path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "supamem: error: message 2 is not a message (SQLSTATE 22023)" in done.stderr
    assert "messages from 2 on were not imported; the 2 before them in this run were: run again with --start 2" in done.stderr
    assert _turns(postgres_conn, a) == [(1, "user", "message 0"), (1, "assistant", "message 1")]
    del messages[3]["turn"]
    path.write_text(json.dumps(messages), encoding="utf-8")
    done = run_cli(client_db.url, "import-history", "--start", "2", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"imported": 2, "conversations": 1}
    assert [t[0] for t in _turns(postgres_conn, a)] == [1, 1, 2, 2]


def test_unreadable_files_and_bad_options_are_exit_2(client_db, tmp_path):
    done = run_cli(client_db.url, "import-history", str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2 and "missing.jsonl" in done.stderr and "Traceback" not in done.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"role": "user"}\n{oops\n', encoding="utf-8")
    done = run_cli(client_db.url, "import-history", str(broken))
    assert done.returncode == 2 and "line 2" in done.stderr and "were not imported" not in done.stderr
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"conversation_id": str(uuid4()), "role": "user", "content": "x"}), encoding="utf-8")
    done = run_cli(client_db.url, "import-history", "--batch", "10001", str(good))
    assert done.returncode == 2 and "--batch must be 1..10000" in done.stderr
    done = run_cli(client_db.url, "import-history", "--start", "2", str(good))
    assert done.returncode == 2 and "--start must be 0..1, the number of messages in the file" in done.stderr
    done = run_cli(client_db.url, "import-history", str(good))
    assert done.returncode == 1 and "conversation not found (SQLSTATE P0002)" in done.stderr


def test_json_lines_stream_and_a_bad_line_after_stored_batches_says_where_to_start(client_db, postgres_conn, tmp_path):
    (a,) = _conversations(client_db, 1)
    lines = [json.dumps({"conversation_id": a, "role": role, "content": f"message {i}"})
             for i, role in enumerate(["user", "assistant", "user", "assistant", "user"])]
    lines[3] = "{oops"
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli(client_db.url, "import-history", "--batch", "2", str(path))
    assert done.returncode == 2 and "history.jsonl, line 4" in done.stderr
    assert "messages from 2 on were not imported; the 2 before them in this run were: run again with --start 2" in done.stderr
    assert [t[2] for t in _turns(postgres_conn, a)] == ["message 0", "message 1"]


def test_a_batch_whose_reply_is_lost_says_it_may_be_stored(client_db, postgres_conn, tmp_path):
    """The connection goes after the database stored a batch, before its reply: the command cannot
    know, so it says both places to start from (it said to send the stored batch again)."""
    (a,) = _conversations(client_db, 1)
    messages = [{"conversation_id": a, "role": role, "content": f"message {i}"}
                for i, role in enumerate(["user", "assistant", "user", "assistant"])]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    target = conninfo_to_dict(client_db.url)
    with db_proxy(str(target.get("host") or "127.0.0.1"), int(target.get("port") or 5432)) as proxy:
        proxy.arm(b"import_messages")
        done = run_cli(make_conninfo(client_db.url, host="127.0.0.1", port=proxy.port), "import-history", "--batch", "2",
                       str(path))
    assert proxy.cut.is_set() and done.returncode == 1, done.stderr
    assert ("messages 0 to 1 were sent as the connection was lost: they are stored whole or not at all; the 0 before"
            " them in this run were stored. Look at the last message of their conversations, then run again with"
            " --start 0 if it is not there or --start 2 if it is") in done.stderr
    assert _turns(postgres_conn, a) == [(1, "user", "message 0"), (1, "assistant", "message 1")]  # it was stored
    done = run_cli(client_db.url, "import-history", "--start", "2", str(path))
    assert done.returncode == 0, done.stderr
    assert [t[0] for t in _turns(postgres_conn, a)] == [1, 1, 2, 2]
