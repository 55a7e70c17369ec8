"""Seed 003's memory module: history, key-value memory and user state, isolated per tenant."""

from __future__ import annotations

from uuid import uuid4

import pytest
from client_helpers import users_with_external_id

from supamem import (
    InvalidInputError,
    InvalidRoleError,
    MemoryNotFoundError,
    Message,
    NotFoundError,
    UserMemory,
    UserMemoryClient,
    UserState,
)
from supamem import user_memory as memory


@pytest.fixture
def client(client_db):
    return UserMemoryClient(client_db)


@pytest.fixture
def user(make_id):
    return make_id("user")


@pytest.fixture(scope="module", autouse=True)
def _module_functions_use_the_test_database(client_db):
    memory.configure(client_db)
    yield
    memory._default = None  # noqa: SLF001 - restore the lazy default


# -- conversation history -----------------------------------------------------------------


def test_reads_of_an_unknown_user_create_nothing(client, make_id, postgres_conn):
    user, tenant = make_id("reader"), make_id("tenant")
    assert client.get_conversation_history(user, tenant) == []
    assert client.get_recent_messages(user, tenant) == []
    assert client.count_messages(user, tenant) == 0
    assert client.clear_conversation_history(user, tenant) == 0
    assert client.get_memory(user, "k", tenant) is None
    assert client.get_all_memory(user, tenant) == []
    assert client.clear_all_memory(user, tenant) == 0
    assert client.get_user_state(user, tenant) is None
    with pytest.raises(MemoryNotFoundError, match="memory key 'k' not found"):
        client.delete_memory(user, "k", tenant)
    with pytest.raises(MemoryNotFoundError, match="user state not found"):
        client.delete_user_state(user, tenant)
    assert users_with_external_id(postgres_conn, user) == 0
    assert postgres_conn.execute("select count(*) from memory.tenants where name = %s", [tenant]).fetchone() == (0,)
    client.add_message(user, "user", "hello", tenant)  # the first write creates user and history
    assert client.count_messages(user, tenant) == 1
    assert users_with_external_id(postgres_conn, user) == 1


def test_add_message_user(user):
    message_id = memory.add_message(user, "user", "What is Python?", tenant_id=1)
    assert isinstance(message_id, int)
    (message,) = memory.get_conversation_history(user, tenant_id=1)
    assert isinstance(message, Message)
    assert (message.id, message.role, message.content) == (message_id, "user", "What is Python?")


def test_add_message_assistant(client, user):
    client.add_message(user, "user", "hi", 1)
    client.add_message(user, "assistant", "hello", 1)
    history = client.get_recent_messages(user, 1)
    assert [(m.role, m.turn_number) for m in history] == [("user", 1), ("assistant", 1)]


def test_get_conversation_history(client, user):
    for n in range(5):
        client.add_message(user, "user", f"q{n}", 1)
        client.add_message(user, "assistant", f"a{n}", 1)
    history = client.get_conversation_history(user, tenant_id=1)
    assert [m.content for m in history[:3]] == ["a4", "q4", "a3"]  # newest first
    page = client.get_conversation_history(user, tenant_id=1, limit=3, offset=3)
    assert [m.content for m in page] == ["q3", "a2", "q2"]
    assert client.get_conversation_history(user, tenant_id=1, limit=5, offset=100) == []


def test_get_recent_messages(client, user):
    for n in range(4):
        client.add_message(user, "user", f"q{n}", 1)
        client.add_message(user, "assistant", f"a{n}", 1)
    recent = client.get_recent_messages(user, tenant_id=1, count=3)
    assert [m.content for m in recent] == ["a2", "q3", "a3"]  # oldest first


def test_count_messages(client, user):
    assert client.count_messages(user, 1) == 0
    for n in range(3):
        client.add_message(user, "user", f"q{n}", 1)
    assert client.count_messages(user, 1) == 3


def test_clear_conversation_history(client, user):
    for n in range(3):
        client.add_message(user, "user", f"q{n}", 1)
    assert client.clear_conversation_history(user, 1) == 3
    assert client.count_messages(user, 1) == 0
    assert client.clear_conversation_history(user, 1) == 0


def test_tenant_isolation(client, user):
    client.add_message(user, "user", "tenant one", tenant_id=1)
    client.add_message(user, "user", "tenant two", tenant_id=2)
    client.add_message(user, "user", "system", tenant_id=None)
    assert [m.content for m in client.get_conversation_history(user, 1)] == ["tenant one"]
    assert [m.content for m in client.get_conversation_history(user, 2)] == ["tenant two"]
    assert [m.content for m in client.get_conversation_history(user, None)] == ["system"]
    client.set_memory(user, "prefs", {"tenant": 1}, tenant_id=1)
    assert client.get_memory(user, "prefs", tenant_id=2) is None
    assert client.get_memory(user, "prefs", tenant_id=None) is None
    client.set_user_state(user, "halted", tenant_id=1)
    assert client.get_user_state(user, tenant_id=2) is None
    assert client.clear_conversation_history(user, 2) == 1
    assert client.count_messages(user, 1) == 1
    tenants = {m.tenant_id for t in (1, 2, None) for m in client.get_recent_messages(user, t)}
    assert len(tenants) == 2 and None in tenants


def test_delete_message(client, user):
    keep = client.add_message(user, "user", "keep", 1)
    doomed = client.add_message(user, "user", "doomed", 1)
    client.delete_message(doomed, tenant_id=1)
    assert [m.id for m in client.get_conversation_history(user, 1)] == [keep]


def test_delete_message_of_another_tenant_is_not_found(client, user):
    message_id = client.add_message(user, "user", "tenant one's", 1)
    for other in (2, None):
        with pytest.raises(MemoryNotFoundError):
            client.delete_message(message_id, tenant_id=other)
    assert client.count_messages(user, 1) == 1


def test_delete_nonexistent(client):
    with pytest.raises(MemoryNotFoundError):
        client.delete_message(2**62, tenant_id=1)
    with pytest.raises(NotFoundError):
        memory.delete_message(2**62, None)


def test_every_call_names_its_tenant(client, user):
    """Seed 003: all functions require tenant_id; a call that forgets it fails before anything is
    written into the system's namespace (None, named, is that namespace)."""
    with pytest.raises(TypeError):
        client.add_message(user, "user", "hi")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        memory.set_memory(user, "prefs", {"a": 1})  # type: ignore[call-arg]
    assert client.count_messages(user, None) == 0 and client.get_memory(user, "prefs", None) is None


def test_invalid_role_error(client, user):
    for role in ("system", "bot", "", "USER"):
        with pytest.raises(InvalidRoleError):
            client.add_message(user, role, "content", 1)
    assert client.count_messages(user, 1) == 0


def test_invalid_content(client, user):
    for content in ("", "   \n", "nul\x00"):
        with pytest.raises(InvalidInputError):
            client.add_message(user, "user", content, 1)
    with pytest.raises(InvalidInputError):
        client.add_message(" ", "user", "empty user id", 1)


# -- user memory ----------------------------------------------------------------------------


def test_set_memory(client, user):
    memory_id = client.set_memory(user, "preferences", {"language": "en", "level": "intermediate"}, 1)
    assert isinstance(memory_id, int)


def test_get_memory(client, user):
    value = {"language": "en", "nested": {"topics": ["async", "typing"], "depth": 3, "ok": True}}
    client.set_memory(user, "preferences", value, 1)
    assert client.get_memory(user, "preferences", 1) == value


def test_memory_upsert(client, user):
    first = client.set_memory(user, "preferences", {"level": "intermediate"}, 1)
    second = client.set_memory(user, "preferences", {"level": "advanced"}, 1)
    assert first == second
    assert client.get_memory(user, "preferences", 1) == {"level": "advanced"}
    assert len(client.get_all_memory(user, 1)) == 1


def test_get_all_memory(client, user):
    client.set_memory(user, "b", {"n": 2}, 1)
    client.set_memory(user, "a", {"n": 1}, 1)
    items = client.get_all_memory(user, 1)
    assert all(isinstance(i, UserMemory) for i in items)
    assert [(i.key, i.value) for i in items] == [("a", {"n": 1}), ("b", {"n": 2})]


def test_delete_memory(client, user):
    client.set_memory(user, "context", {"topic": "x"}, 1)
    client.delete_memory(user, "context", 1)
    assert client.get_memory(user, "context", 1) is None


def test_clear_all_memory(client, user):
    for key in ("a", "b", "c"):
        client.set_memory(user, key, {"k": key}, 1)
    assert client.clear_all_memory(user, 1) == 3
    assert client.get_all_memory(user, 1) == []


def test_memory_not_found(client, user):
    assert client.get_memory(user, "missing", 1) is None
    with pytest.raises(MemoryNotFoundError):
        client.delete_memory(user, "missing", 1)


def test_memory_value_must_be_an_object(client, user):
    for value in ([1, 2], "text", 3):
        with pytest.raises(InvalidInputError):
            client.set_memory(user, "bad", value, 1)  # type: ignore[arg-type]


# -- user state -----------------------------------------------------------------------------


def test_set_user_state(client, user):
    state = client.set_user_state(user, "halted", 1)
    assert isinstance(state, UserState) and state.mode == "halted"


def test_get_user_state(client, user):
    assert client.get_user_state(user, 1) is None
    client.set_user_state(user, "active", 1)
    state = client.get_user_state(user, 1)
    assert state is not None and state.mode == "active"


def test_state_upsert(client, user):
    client.set_user_state(user, "halted", 1)
    client.set_user_state(user, "active", 1)
    assert client.get_user_state(user, 1).mode == "active"


def test_delete_user_state(client, user):
    client.set_user_state(user, "halted", 1)
    client.delete_user_state(user, 1)
    assert client.get_user_state(user, 1) is None
    with pytest.raises(MemoryNotFoundError):
        client.delete_user_state(user, 1)


# -- tenant keys ----------------------------------------------------------------------------


def test_tenant_keys_int_name_and_uuid(client, user, postgres_conn):
    client.add_message(user, "user", "by int", 7)
    tenant_uuid = client.identity.tenant(7)
    name = postgres_conn.execute("select name from memory.tenants where id = %s", [tenant_uuid]).fetchone()
    assert name == ("tenant-7",)
    assert [m.content for m in client.get_recent_messages(user, tenant_uuid)] == ["by int"]
    assert [m.content for m in client.get_recent_messages(user, str(tenant_uuid))] == ["by int"]
    assert [m.content for m in client.get_recent_messages(user, "tenant-7")] == ["by int"]
    with pytest.raises(InvalidInputError):
        client.add_message(user, "user", "unknown tenant", uuid4())  # must exist
    with pytest.raises(InvalidInputError):
        client.add_message(user, "user", "bool is not a tenant", True)  # type: ignore[arg-type]


def test_module_functions_cover_the_whole_api(user):
    memory.add_message(user, "user", "q", 3)
    memory.add_message(user, "assistant", "a", 3)
    assert memory.count_messages(user, 3) == 2
    assert [m.content for m in memory.get_recent_messages(user, 3)] == ["q", "a"]
    memory.set_memory(user, "k", {"v": 1}, 3)
    assert memory.get_memory(user, "k", 3) == {"v": 1}
    assert [m.key for m in memory.get_all_memory(user, 3)] == ["k"]
    memory.delete_memory(user, "k", 3)
    assert memory.clear_all_memory(user, 3) == 0
    memory.set_user_state(user, "active", 3)
    assert memory.get_user_state(user, 3).mode == "active"
    memory.delete_user_state(user, 3)
    assert memory.clear_conversation_history(user, 3) == 2


def test_models_carry_the_ids_the_app_passed(client, user):
    """Seed 003's models: `user_id` is the app's text id and `tenant_id` its tenant key."""
    client.add_message(user, "user", "hello", tenant_id=1)
    client.set_memory(user, "preferences", {"theme": "dark"}, tenant_id=1)
    client.set_user_state(user, "active", tenant_id=1)
    (message,) = client.get_recent_messages(user, tenant_id=1)
    (kv,) = client.get_all_memory(user, tenant_id=1)
    state = client.get_user_state(user, tenant_id=1)
    for model in (message, kv, state):
        assert (model.user_id, model.tenant_id) == (user, 1)
    assert client.set_user_state(user, "halted", tenant_id=1).user_id == user
