-- RPC functions for conversations: what the seeds' service interfaces call.
--
-- All run as the caller (security invoker), so RLS decides what each caller reaches; service_role
-- passes `p_user_id`, a signed-in user may leave it out. Reads never return expired rows, even
-- before the sweep deletes them.

-- Why: one way to start a conversation, whatever the seed calls it (conversation, session).
-- A client may choose the id (a session it had to start while the database was unreachable).
create function memory.create_conversation(
    p_user_id uuid default null,
    p_title text default null,
    p_mode text default 'chat',
    p_profile_id uuid default null,
    p_remember boolean default null,
    p_metadata jsonb default '{}',
    p_ttl interval default null,
    p_window_turns integer default null,
    p_id uuid default null
)
returns memory.conversations
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.writing_user(p_user_id);
    v_conversation memory.conversations;
begin
    insert into memory.conversations (id, user_id, title, mode, profile_id, remember, metadata, ttl, window_turns)
    values (coalesce(p_id, gen_random_uuid()), v_user, p_title, coalesce(p_mode, 'chat'), p_profile_id, p_remember,
        coalesce(p_metadata, '{}'), p_ttl, p_window_turns)
    returning * into v_conversation;
    return v_conversation;
end
$$;
grant execute on function memory.create_conversation(
    uuid, text, text, uuid, boolean, jsonb, interval, integer, uuid
) to authenticated, service_role;

-- Why: seed 001 hands out session ids; a session is a conversation with the default policy.
create function memory.create_session(p_user_id uuid default null)
returns uuid
language sql
set search_path = ''
as $$
    select (memory.create_conversation(p_user_id)).id
$$;
grant execute on function memory.create_session(uuid) to authenticated, service_role;

-- Why: seed 000 keeps one running conversation per user and seed 002 asks for
-- `GET /api/conversations/current`; concurrent first requests must not create two. The retention
-- arguments apply only when a new conversation has to be created; p_match keeps apart the kinds
-- of conversation one user has (e.g. seed 000's running chat and seed 001's sessions): only a
-- conversation whose metadata contains it is current, and a new one gets it as metadata.
create function memory.current_conversation(
    p_user_id uuid default null,
    p_ttl interval default null,
    p_window_turns integer default null,
    p_match jsonb default '{}'
)
returns memory.conversations
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_conversation memory.conversations;
begin
    perform pg_advisory_xact_lock(hashtextextended('supamem.current_conversation:' || v_user::text, 0));
    select c.* into v_conversation
    from memory.conversations as c
    where c.user_id = v_user and not c.archived and (c.expires_at is null or c.expires_at > now())
        and c.metadata @> coalesce(p_match, '{}')
    order by c.updated_at desc
    limit 1;
    if not found then
        v_conversation := memory.create_conversation(
            v_user, p_metadata => p_match, p_ttl => p_ttl, p_window_turns => p_window_turns
        );
    end if;
    return v_conversation;
end
$$;
grant execute on function memory.current_conversation(uuid, interval, integer, jsonb) to authenticated, service_role;

-- Why: the single entry point for writing one message; numbering, window, TTL and ownership are
-- enforced by the table (memory_private.assign_turn), so Data API inserts behave the same.
create function memory.add_message(
    p_conversation_id uuid,
    p_role text,
    p_content text,
    p_metadata jsonb default '{}',
    p_author_id uuid default null,
    p_tool_calls jsonb default null,
    p_suggested_values jsonb default null,
    p_suggested_actions jsonb default null,
    p_custom_payload jsonb default null,
    p_used_memory_ids uuid[] default '{}',
    p_user_id uuid default null
)
returns memory.messages
language plpgsql
set search_path = ''
as $$
declare
    v_message memory.messages;
begin
    -- The service role may name the user it acts for: a conversation of anyone else is not found.
    if p_user_id is not null and not exists (
        select 1 from memory.conversations as c where c.id = p_conversation_id and c.user_id = p_user_id
    ) then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s of user %s', p_conversation_id, p_user_id);
    end if;
    if p_role is null or p_role not in ('user', 'assistant') then
        raise exception using errcode = '22023', message = format('invalid role %L', p_role),
            hint = 'role must be ''user'' or ''assistant''';
    end if;
    if p_content is null or p_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'content must not be empty';
    end if;
    insert into memory.messages (
        conversation_id, role, content, metadata, author_id, tool_calls, suggested_values,
        suggested_actions, custom_payload, used_memory_ids
    ) values (
        p_conversation_id, p_role, p_content, coalesce(p_metadata, '{}'), p_author_id, p_tool_calls,
        p_suggested_values, p_suggested_actions, p_custom_payload, coalesce(p_used_memory_ids, '{}')
    )
    returning * into v_message;
    return v_message;
end
$$;
grant execute on function memory.add_message(
    uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid
) to authenticated, service_role;

-- Why: a turn (question and answer) is stored atomically: both messages or neither.
create function memory.add_turn(
    p_conversation_id uuid,
    p_user_content text,
    p_assistant_content text,
    p_metadata jsonb default '{}',
    p_author_id uuid default null,
    p_tool_calls jsonb default null,
    p_suggested_values jsonb default null,
    p_suggested_actions jsonb default null,
    p_custom_payload jsonb default null,
    p_used_memory_ids uuid[] default '{}',
    p_user_id uuid default null
)
returns table (turn_number integer, user_message_id bigint, assistant_message_id bigint, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
    v_question memory.messages;
    v_answer memory.messages;
begin
    v_question := memory.add_message(
        p_conversation_id, 'user', p_user_content, p_metadata, p_author_id, p_user_id => p_user_id
    );
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'response must not be empty';
    end if;
    v_answer := memory.add_message(
        p_conversation_id, 'assistant', p_assistant_content, p_metadata, null, p_tool_calls,
        p_suggested_values, p_suggested_actions, p_custom_payload, p_used_memory_ids
    );
    return query select v_question.turn_number, v_question.id, v_answer.id, v_question.created_at;
end
$$;
grant execute on function memory.add_turn(
    uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid
) to authenticated, service_role;

-- Why: prompts want the newest messages oldest-first, screens want them newest-first and paged
-- (seed 003); both walk the (conversation, turn, role) index backwards and stop at the limit.
create function memory.history(
    p_conversation_id uuid,
    p_limit integer default 20,
    p_offset integer default 0,
    p_newest_first boolean default false
)
returns setof memory.messages
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_limit is null or p_limit < 1 or p_limit > 1000 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..1000 and offset >= 0';
    end if;
    if p_newest_first then
        return query
        select m.*
        from memory.messages as m
        where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
        order by m.turn_number desc, m.role asc
        limit p_limit offset p_offset;
    else
        return query
        select page.*
        from memory.history(p_conversation_id, p_limit, p_offset, true) as page
        order by page.turn_number asc, page.role desc;
    end if;
end
$$;
grant execute on function memory.history(uuid, integer, integer, boolean) to authenticated, service_role;

-- Why: seeds 000 and 001 read whole turns; the newest N, oldest first, bounded by the index.
create function memory.turn_history(p_conversation_id uuid, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path = ''
as $$
declare
    v_last integer;
begin
    if p_max_turns is null or p_max_turns < 1 or p_max_turns > 500 then
        raise exception using errcode = '22023', message = 'max turns must be 1..500';
    end if;
    select c.last_turn into v_last from memory.conversations as c where c.id = p_conversation_id;
    return query
    select t.*
    from memory.turns as t
    where t.conversation_id = p_conversation_id and t.turn_number > coalesce(v_last, 0) - p_max_turns
    order by t.turn_number;
end
$$;
grant execute on function memory.turn_history(uuid, integer) to authenticated, service_role;

-- Why: seed 000's "yung una" / "the first one": the phrases are data, so a team adds a language
-- by inserting rows. Positions count within the turns the prompt shows (the newest N): 1 is the
-- oldest of them, -1 the most recent ("earlier", "kanina").
create table memory.reference_phrases (
    phrase text primary key check (phrase = lower(btrim(phrase)) and phrase ~ '[^[:space:]]'),
    position integer not null check (position <> 0),
    language text not null check (language ~ '^[a-z]{2,3}$')
);
comment on table memory.reference_phrases is 'Phrases that point at an earlier turn; position 1 = first shown, -1 = latest.';
alter table memory.reference_phrases enable row level security;
create policy "Signed-in users read reference phrases" on memory.reference_phrases
for select to authenticated
using (true);
grant select on memory.reference_phrases to authenticated;
grant select, insert, update, delete on memory.reference_phrases to service_role;

insert into memory.reference_phrases (phrase, position, language) values
('yung una', 1, 'fil'), ('una', 1, 'fil'), ('unang', 1, 'fil'),
('yung pangalawa', 2, 'fil'), ('pangalawa', 2, 'fil'), ('ikalawa', 2, 'fil'),
('yung pangatlo', 3, 'fil'), ('pangatlo', 3, 'fil'), ('ikatlo', 3, 'fil'),
('yung pang-apat', 4, 'fil'), ('pang-apat', 4, 'fil'), ('ikaapat', 4, 'fil'),
('yung panglima', 5, 'fil'), ('panglima', 5, 'fil'), ('ikalima', 5, 'fil'),
('yung kanina', -1, 'fil'), ('kanina', -1, 'fil'), ('yung huli', -1, 'fil'), ('huli', -1, 'fil'),
('the first one', 1, 'en'), ('first', 1, 'en'), ('the second one', 2, 'en'), ('second', 2, 'en'),
('the third one', 3, 'en'), ('third', 3, 'en'), ('the fourth one', 4, 'en'), ('fourth', 4, 'en'),
('the fifth one', 5, 'en'), ('fifth', 5, 'en'),
('earlier', -1, 'en'), ('previous', -1, 'en'), ('last one', -1, 'en'), ('the last one', -1, 'en'),
('the previous one', -1, 'en'), ('the one before', -2, 'en'), ('second to last', -2, 'en');

-- Why: a query such as "tell me more about yung una" names a turn; the longest phrase found as
-- whole words wins, so "the first one" is not read as "first" and "una" not inside "unang".
-- The query's runs of one to four words are looked up by the phrases' primary key, so the cost
-- does not grow with the number of phrases. Returns the position (1 = first shown, -1 = latest).
create function memory_private.reference_position(p_text text)
returns integer
language sql
stable
set search_path = ''
as $$
    with words as (
        select w.word, w.n
        from unnest(regexp_split_to_array(
            btrim(lower(regexp_replace(coalesce(p_text, ''), '[^[:alnum:]-]+', ' ', 'g'))), ' '
        )) with ordinality as w (word, n)
    )
    select r.position
    from words as first_word
    cross join generate_series(0, 3) as extra (k)
    join memory.reference_phrases as r on r.phrase = (
        select string_agg(w.word, ' ' order by w.n) from words as w
        where w.n between first_word.n and first_word.n + extra.k
    )
    order by length(r.phrase) desc, r.phrase
    limit 1
$$;
grant execute on function memory_private.reference_position(text) to authenticated, service_role;

create function memory.resolve_reference(p_conversation_id uuid, p_text text, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path = ''
as $$
declare
    v_position integer := memory_private.reference_position(p_text);
begin
    if v_position is null then
        return;
    end if;
    return query
    select w.*
    from memory.turn_history(p_conversation_id, p_max_turns) as w
    order by
        case when v_position > 0 then w.turn_number end asc,
        case when v_position < 0 then w.turn_number end desc
    limit 1 offset abs(v_position) - 1;
end
$$;
grant execute on function memory.resolve_reference(uuid, text, integer) to authenticated, service_role;

-- Why: the app server builds a prompt with one round trip: the window of turns and the turn the
-- user points at. Later migrations add memories and summaries to the same document.
create function memory.prompt_context(p_conversation_id uuid, p_query text default null, p_max_turns integer default 10)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
        'conversation_id', p_conversation_id,
        'history', coalesce(
            (select jsonb_agg(to_jsonb(h) order by h.turn_number)
            from memory.turn_history(p_conversation_id, p_max_turns) as h),
            '[]'
        ),
        'referenced_turn',
        (select to_jsonb(r) from memory.resolve_reference(p_conversation_id, p_query, p_max_turns) as r)
    )
$$;
grant execute on function memory.prompt_context(uuid, text, integer) to authenticated, service_role;

-- Why: seed 003 counts a history; expired messages do not count.
create function memory.count_messages(p_conversation_id uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
    select count(*)
    from memory.messages as m
    where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
$$;
grant execute on function memory.count_messages(uuid) to authenticated, service_role;

-- Why: seed 003's clear_conversation_history: the messages go, the conversation stays; turn
-- numbers keep counting up, so a turn number never names two different turns.
create function memory.clear_conversation(p_conversation_id uuid)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_deleted integer;
begin
    delete from memory.messages as m where m.conversation_id = p_conversation_id;
    get diagnostics v_deleted = row_count;
    return v_deleted;
end
$$;
grant execute on function memory.clear_conversation(uuid) to authenticated, service_role;

-- Why: seed 003's delete_message reports a missing message instead of succeeding silently.
create function memory.delete_message(p_message_id bigint)
returns void
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.messages as m where m.id = p_message_id;
    if not found then
        raise exception using errcode = 'P0002', message = format('message %s not found', p_message_id);
    end if;
end
$$;
grant execute on function memory.delete_message(bigint) to authenticated, service_role;

-- Why: seed 001's delete_session returns how many turns went with it.
create function memory.delete_conversation(p_conversation_id uuid)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_turns integer;
begin
    select count(distinct m.turn_number) into v_turns
    from memory.messages as m
    where m.conversation_id = p_conversation_id;
    delete from memory.conversations as c where c.id = p_conversation_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'conversation not found';
    end if;
    return v_turns;
end
$$;
grant execute on function memory.delete_conversation(uuid) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
