-- Seeds 000 and 001 speak of turns: a user message and its answer. Grouping by the turn keys lets
-- a filter on conversation_id and turn_number reach the messages index through the view.
create view memory.turns with (security_invoker = true) as
select
    m.conversation_id,
    m.user_id,
    m.tenant_id,
    m.turn_number,
    min(m.id) filter (where m.role = 'user') as user_message_id,
    min(m.id) filter (where m.role = 'assistant') as assistant_message_id,
    max(m.content) filter (where m.role = 'user') as user_content,
    max(m.content) filter (where m.role = 'assistant') as assistant_content,
    coalesce(
        (array_agg(m.metadata) filter (where m.role = 'user'))[1],
        (array_agg(m.metadata) filter (where m.role = 'assistant'))[1]
    ) as metadata,
    min(m.created_at) as created_at
from memory.messages as m
where m.expires_at is null or m.expires_at > now()
group by m.conversation_id, m.user_id, m.tenant_id, m.turn_number;

comment on view memory.turns is 'Turns (seeds 000, 001): live messages paired by turn number.';

grant select on memory.turns to authenticated;
grant select on memory.turns to service_role;
