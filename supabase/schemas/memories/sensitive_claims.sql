-- Why: a before trigger, so dedup's "keep the higher confidence", revisions and imports are capped
-- as inserts are; the category the model chose or the claim's own words make it sensitive.
create function memory_private.cap_sensitive_confidence()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.source_message_id is not null and (
        memory_private.setting('sensitive_categories') ? lower(new.category)
        or memory_private.is_sensitive_claim(new.content)
    ) then
        new.confidence := least(new.confidence, (memory_private.setting('sensitive_confidence_max') #>> '{}')::numeric);
    end if;
    return new;
end
$$;

create trigger memories_cap_sensitive_confidence
before insert or update of confidence, category, source_message_id on memory.memories
for each row execute function memory_private.cap_sensitive_confidence();

revoke all on function memory_private.cap_sensitive_confidence() from public, anon, authenticated, service_role;

create table memory_private.sensitive_terms (
    term text primary key check (term ~ '[^[:space:]]' and length(term) <= 100),
    category text not null check (category ~ '[^[:space:]]'),
    query tsquery generated always as (phraseto_tsquery('english'::regconfig, term)) stored
);

alter table memory_private.sensitive_terms enable row level security;

comment on table memory_private.sensitive_terms is
'Words and phrases that make a claim drawn from a conversation medical or financial (kept with low confidence).';

grant select on memory_private.sensitive_terms to service_role;

-- Why: one place that says whether a text makes a medical or financial claim. Security definer
-- because the terms live where API roles cannot write them.
create function memory_private.is_sensitive_claim(p_content text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return exists (
        select 1
        from memory_private.sensitive_terms as t
        where to_tsvector('english'::regconfig, coalesce(p_content, '')) @@ t.query
    );
end
$$;

revoke all on function memory_private.is_sensitive_claim(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.is_sensitive_claim(text) to authenticated, service_role;

insert into memory_private.sensitive_terms (term, category)
select
    h.term,
    'health' as category
from (
    values
    ('insulin'), ('diabetes'), ('diabetic'), ('cancer'), ('chemotherapy'), ('tumor'), ('medication'),
    ('medicine'), ('prescription'), ('prescribed'), ('diagnosis'), ('diagnosed'), ('antidepressant'),
    ('antibiotic'), ('depression'), ('anxiety disorder'), ('panic attack'), ('blood pressure'),
    ('cholesterol'), ('asthma'), ('inhaler'), ('hiv'), ('pregnant'), ('pregnancy'), ('miscarriage'),
    ('surgery'), ('disease'), ('illness'), ('symptom'), ('therapy'), ('therapist'), ('psychiatrist'),
    ('allergy'), ('allergic'), ('dosage'), ('epilepsy'), ('seizure'), ('adhd'), ('autism'), ('bipolar'),
    ('schizophrenia'), ('migraine'), ('arthritis'), ('heart attack'), ('stroke'), ('chronic pain'),
    ('mental health'), ('eating disorder'), ('addiction'), ('rehab'), ('dialysis'), ('transplant'),
    ('infection'), ('vaccine'), ('hospital'), ('clinic')
) as h (term);

insert into memory_private.sensitive_terms (term, category)
select
    f.term,
    'finance' as category
from (
    values
    ('salary'), ('income'), ('mortgage'), ('loan'), ('debt'), ('credit card'), ('credit score'),
    ('bank account'), ('savings'), ('investment'), ('invest'), ('stocks'), ('shares'), ('crypto'),
    ('bitcoin'), ('tax'), ('taxes'), ('bankruptcy'), ('pension'), ('retirement fund'), ('401k'),
    ('net worth'), ('paycheck'), ('wage'), ('inheritance'), ('overdraft'), ('owe'), ('owes'),
    ('payday loan'), ('rent arrears')
) as f (term);
