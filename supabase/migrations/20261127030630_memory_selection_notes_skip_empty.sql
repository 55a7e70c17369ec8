-- A memory write that touches no profile's memory (the foreign key's update of memories when a
-- trimmed message leaves, on every windowed turn) notes nothing and skips the scoring statement.
set check_function_bodies = off;

create or replace function memory_private.memory_selection_changed()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_new memory.memories [] := '{}';
    v_old memory.memories [] := '{}';
begin
    if tg_op <> 'DELETE' then
        v_new := array(select n from new_memories as n where n.profile_id is not null);
    end if;
    if tg_op <> 'INSERT' then
        v_old := array(select o from old_memories as o where o.profile_id is not null);
    end if;
    -- Nothing to note: the common case is the foreign key's update when a message leaves (every
    -- trimmed turn), which matches no memory; the scoring statement would still cost a turn ~50 us.
    if cardinality(v_new) = 0 and cardinality(v_old) = 0 then
        return null;
    end if;
    with standing as (
        select x.side, x.id, x.profile_id, x.pinned,
            x.active and not x.archived and x.deleted_at is null and (x.expires_at is null or x.expires_at > now())
            as live,
            memory_private.memory_score(
                t.weight, x.confidence, x.last_referenced_at, x.created_at, x.reference_count, now()
            ) as score
        from (
            select 'new' as side, n.* from unnest(v_new) as n
            union all
            select 'old' as side, o.* from unnest(v_old) as o
        ) as x
        join memory.memory_types as t on t.type = x.type
    ),
    paired as (
        select n.id as new_id, n.profile_id as new_profile, n.live as new_live, n.pinned as new_pinned,
            n.score as new_score, o.id as old_id, o.profile_id as old_profile, o.live as old_live,
            o.pinned as old_pinned, o.score as old_score
        from (select * from standing where side = 'new') as n
        full join (select * from standing where side = 'old') as o on o.id = n.id
    )
    -- A note for every such write, even of a memory noted before: a refresh takes the notes it can
    -- see with the memories it scans, so skipping a note because another exists could leave this
    -- write unnoted after a refresh that did not see it.
    insert into memory_private.memory_selection_notes (profile_id, memory_id)
    select x.profile_id, x.memory_id
    from (
        select p.new_profile as profile_id, p.new_id as memory_id
        from paired as p
        where p.new_live
            and (p.old_id is null or not p.old_live or p.old_profile is distinct from p.new_profile
                or (p.new_pinned and not p.old_pinned) or p.new_score > p.old_score)
        union all
        select distinct p.old_profile, null::uuid
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.old_profile
        where p.old_live and p.old_id = any(s.candidates) and s.bound is not null
            and (p.new_id is null or not p.new_live or p.new_profile is distinct from p.old_profile
                or (p.old_pinned and not p.new_pinned) or p.new_score < p.old_score)
    ) as x;
    return null;
end
$function$;


revoke all on function memory_private.memory_selection_changed() from public, anon, authenticated, service_role;
