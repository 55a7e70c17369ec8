-- Seed 004's onboarding: a profile-mode conversation started before the user had a profile is linked to
-- the profile that becomes their primary one.
set check_function_bodies = off;

create or replace function memory_private.link_onboarding_conversations()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    update memory.conversations as c
    set profile_id = p.id
    from new_profiles as p
    where p.is_primary and c.user_id = p.user_id and c.mode = 'profile' and c.profile_id is null and not c.archived;
    return null;
end
$function$;

create trigger profiles_link_onboarding_conversations_inserted
after insert on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.link_onboarding_conversations();

create trigger profiles_link_onboarding_conversations_updated
after update on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.link_onboarding_conversations();

revoke all on function memory_private.link_onboarding_conversations() from public, anon, authenticated, service_role;
