-- Why: a signed-in caller is the author of the question they write (a participant's question is
-- recorded as theirs even when no author is named) and may name nobody else; the author must
-- belong to the conversation whoever writes. Runs after messages_assign_turn (trigger names
-- fire in alphabetical order), which has filled the owner.
create function memory_private.check_message_author()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_caller uuid := (select auth.uid());
begin
    if v_caller is not null then
        if new.role = 'user' and new.author_id is null and v_caller <> new.user_id then
            new.author_id := v_caller;
        end if;
        if new.author_id is not null and new.author_id <> v_caller then
            raise exception using
                errcode = '42501',
                message = 'only the author writes their own words',
                detail = format('author %s, caller %s', new.author_id, v_caller),
                hint = 'A participant posts from their own session; leave the author out.';
        end if;
    end if;
    if new.author_id is not null and new.author_id <> new.user_id and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = new.author_id
    ) then
        raise exception using
            errcode = '23503',
            message = 'message author is not a participant of the conversation',
            detail = format('author %s, conversation %s', new.author_id, new.conversation_id);
    end if;
    return new;
end
$$;

create trigger messages_check_author
before insert or update of author_id on memory.messages
for each row execute function memory_private.check_message_author();

revoke all on function memory_private.check_message_author() from public, anon, authenticated, service_role;
