-- Why: a caller without a signed-in user reads any user's rows only as the service role or the
-- owner (migrations, pg_cron); the checks that stand in for the per-row policies ask this.
create function memory_private.trusted_caller()
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
    return pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage');
end
$$;

revoke all on function memory_private.trusted_caller() from public, anon, authenticated, service_role;
grant execute on function memory_private.trusted_caller() to authenticated, service_role;

-- Why: functions that read a conversation's messages as the owner (memory.history) check access
-- once, for the conversation, instead of the per-row policy on every message. True when the caller
-- may read the conversation as the conversations policy lets them (a live conversation they own,
-- take part in, or whose tenant they administer), or is a trusted caller (the service role, or
-- the owner: migrations, pg_cron), who reads any. pgTAP holds it to the policy's answer.
create function memory_private.reads_conversation(p_conversation_id uuid)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is null then
        return memory_private.trusted_caller();
    end if;
    return exists (
        select 1 from memory.conversations as c
        where c.id = p_conversation_id
            and (c.expires_at is null or c.expires_at > now())
            and (
                c.user_id = v_uid
                or c.id = any(memory_private.joined_conversations())
                or c.tenant_id = any(memory_private.administered_tenants())
            )
    );
end
$$;

revoke all on function memory_private.reads_conversation(uuid) from public, anon, authenticated, service_role;
