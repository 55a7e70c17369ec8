-- memory.retry_refused_embeddings (service role): a team that fixed what made the embeddings server
-- refuse texts embeds those rows again. Each vector table gets a partial index of its refused rows;
-- building it reads the table once under a lock that holds writers back (the embed jobs, message
-- deletes), about as long as the constraint checks of 20261127173232 took.

create index memory_embeddings_refused_idx on memory_private.memory_embeddings using btree (user_id) where (
    refused is not null
);

create index message_embeddings_refused_idx on memory_private.message_embeddings using btree (user_id) where (
    refused is not null
);

set check_function_bodies = off;

create or replace function memory.retry_refused_embeddings(p_user_id uuid default null::uuid)
returns integer
language plpgsql
set search_path to ''
as $function$
declare
    v_users uuid[];
begin
    with messages as (
        delete from memory_private.message_embeddings as e
        where e.refused is not null and (p_user_id is null or e.user_id = p_user_id)
        returning e.user_id, e.message_id
    ),
    noted as (
        insert into memory_private.pending_embeddings (user_id, message_id)
        select m.user_id, m.message_id from messages as m
        on conflict do nothing
    ),
    memories as (
        delete from memory_private.memory_embeddings as e
        where e.refused is not null and (p_user_id is null or e.user_id = p_user_id)
        returning e.user_id
    )
    select array_agg(x.user_id) into v_users
    from (select m.user_id from messages as m union all select mm.user_id from memories as mm) as x;
    perform memory_private.queue_embed(u.id) from (select distinct x.id from unnest(v_users) as x (id)) as u;
    return coalesce(cardinality(v_users), 0);
end
$function$;


revoke all on function memory.retry_refused_embeddings(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.retry_refused_embeddings(uuid) to service_role;
