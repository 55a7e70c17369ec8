-- Why: seed 004's onboarding: a user may start a conversation in profile mode before they have a
-- profile. When a profile of theirs becomes primary (made so, or made primary), their live
-- profile-mode conversations that name no profile are linked to it, so they build memory from
-- then on like any conversation on the Main Profile. Runs with the writer's rights: a user's own
-- conversations, which the conversations policy lets them update.
create function memory_private.link_onboarding_conversations()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    update memory.conversations as c
    set profile_id = p.id
    from new_profiles as p
    where p.is_primary and c.user_id = p.user_id and c.mode = 'profile' and c.profile_id is null and not c.archived;
    return null;
end
$$;

revoke all on function memory_private.link_onboarding_conversations() from public, anon, authenticated, service_role;

create trigger profiles_link_onboarding_conversations_inserted
after insert on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.link_onboarding_conversations();

create trigger profiles_link_onboarding_conversations_updated
after update on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.link_onboarding_conversations();
