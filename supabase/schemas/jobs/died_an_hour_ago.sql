-- Why: a scheduled job that died (its retries spent, an LLM outage of a few minutes is enough)
-- held its key, so the hourly schedulers never queued its week or month again and the gap they are
-- meant to heal stayed until the finished jobs were pruned. They queue it again once it has been
-- dead an hour, as queue_embeddings does for an embed job: not at every run while its cause may
-- last.
create function memory_private.died_an_hour_ago(p_kind text, p_dedup_key text, p_now timestamptz)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
    return exists (
        select 1 from memory_private.jobs as j
        where j.kind = p_kind and j.dedup_key = p_dedup_key and j.status = 'dead'
            and j.failed_at <= p_now - interval '1 hour'
    );
end
$$;

revoke all on function memory_private.died_an_hour_ago(text, text, timestamptz)
from public, anon, authenticated, service_role;
grant execute on function memory_private.died_an_hour_ago(text, text, timestamptz) to service_role;
