-- A user's first memory makes their primary profile when they have none at all.
--
-- Why: memories belong to a profile, and a new user of the kit (seed 002's create_memory, the
-- README's first example) has none yet; refusing the memory until the app created one made the
-- first call fail. A user with profiles but no primary one still chooses (memory_defaults' error
-- stays), and a signed-in caller makes nothing for another user's row (RLS refuses it). Runs
-- before memories_defaults (triggers fire in name order), which then finds the new profile.

create function memory_private.first_profile()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.profile_id is null
        and ((select auth.uid()) is null or new.user_id = (select auth.uid()))
        and not exists (select 1 from memory.profiles as p where p.user_id = new.user_id) then
        insert into memory.profiles (user_id, tenant_id, is_primary)
        select u.id, u.tenant_id, true from memory.users as u where u.id = new.user_id
        on conflict (user_id) where is_primary do nothing;
    end if;
    return new;
end
$$;
revoke all on function memory_private.first_profile() from public, anon, authenticated, service_role;

create trigger memories_before_defaults_first_profile
before insert on memory.memories
for each row execute function memory_private.first_profile();
