-- Why: the memories lexical ranking counts and scores for a user: all that are not deleted or
-- expired (search, which also finds archived ones and leads to the turns they came from) or, given
-- a profile, its live memories, what selection chooses from. The selection's corpus is bounded by
-- memory_cap, however many memories the user has archived or keeps in other profiles, and a term's
-- rarity is its rarity among the memories ranked. Two static statements, so the profile's reads
-- the live memories' index. Called by lexical_memories, which checks the caller and passes the
-- tenants an admin may read; no one else calls it.
create function memory_private.memory_corpus(p_user_id uuid, p_profile_id uuid, p_tenants uuid[])
returns table (id uuid, search tsvector)
language plpgsql
stable
rows 200
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
    if p_profile_id is null then
        return query
        select mm.id, mm.search from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null
            and (mm.expires_at is null or mm.expires_at > now())
            and (p_tenants is null or mm.tenant_id = any(p_tenants));
    else
        return query
        select mm.id, mm.search from memory.memories as mm
        where mm.user_id = p_user_id and mm.profile_id = p_profile_id
            and mm.active and not mm.archived and mm.deleted_at is null
            and (mm.expires_at is null or mm.expires_at > now())
            and (p_tenants is null or mm.tenant_id = any(p_tenants));
    end if;
end
$$;

revoke all on function memory_private.memory_corpus(uuid, uuid, uuid[]) from public, anon, authenticated, service_role;
