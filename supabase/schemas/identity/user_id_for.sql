-- Why: seed 000 and 003 identify people by text ids scoped to a tenant; one function owns that
-- mapping so the same id always means the same person, even under concurrent first requests.
create function memory.user_id_for(p_external_id text, p_tenant_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid;
begin
    if p_external_id is null or p_external_id !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'external user id must not be empty';
    end if;
    -- Longer, its index entry overflowed (54000, which reads as a limit to retry later).
    if length(p_external_id) > 255 then
        raise exception using errcode = '22023', message = 'external user id must be at most 255 characters';
    end if;
    perform memory_private.check_tenant(p_tenant_id);
    insert into memory.users (tenant_id, external_id)
    values (p_tenant_id, p_external_id)
    on conflict (tenant_id, external_id) where external_id is not null do nothing
    returning id into v_id;
    if v_id is null then
        select u.id into v_id
        from memory.users as u
        where u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id;
    end if;
    return v_id;
end
$$;

revoke all on function memory.user_id_for(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.user_id_for(text, uuid) to service_role;
