-- Why: tenants are isolated; a participant from another tenant would let that tenant's admin
-- read this conversation (and hide it from this tenant's admin).
create function memory_private.check_participant_tenant()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if (select u.tenant_id from memory.users as u where u.id = new.user_id) is distinct from (
        select c.tenant_id from memory.conversations as c where c.id = new.conversation_id
    ) then
        raise exception using errcode = '22023', message = 'participants must belong to the conversation''s tenant';
    end if;
    return null;
end
$$;

-- A constraint trigger fires after the row passed RLS, so a caller without rights gets 42501 first.
create constraint trigger participants_check_tenant
after insert or update of user_id, conversation_id on memory.participants
for each row execute function memory_private.check_participant_tenant();

revoke all on function memory_private.check_participant_tenant() from public, anon, authenticated, service_role;
