-- Medical and financial claims are recognised by what they say, not only by the model's tag.
--
-- Why: the cap on sensitive claims (20261123001500) read only the category the model chose, so
-- "Takes insulin every morning" without a category kept confidence 0.9. Seed 004's guardrail is
-- about the claim itself. The terms are data (like reference_phrases): a team adds a row to
-- widen them. Each is matched as a phrase of English lexemes, so "insulin" matches "insulin"
-- but not "insulate", and "credit card" only as those two words in a row.
create table memory_private.sensitive_terms (
    term text primary key check (term ~ '[^[:space:]]' and length(term) <= 100),
    category text not null check (category ~ '[^[:space:]]'),
    query tsquery generated always as (phraseto_tsquery('english'::regconfig, term)) stored
);
alter table memory_private.sensitive_terms enable row level security;
grant select on memory_private.sensitive_terms to service_role;
comment on table memory_private.sensitive_terms is
'Words and phrases that make a claim drawn from a conversation medical or financial (kept with low confidence).';

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

-- Why: one place that says whether a text makes a medical or financial claim. Security definer
-- because the terms live where API roles cannot write them.
create function memory_private.is_sensitive_claim(p_content text)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
    select exists (
        select 1
        from memory_private.sensitive_terms as t
        where to_tsvector('english'::regconfig, coalesce(p_content, '')) @@ t.query
    )
$$;
grant execute on function memory_private.is_sensitive_claim(text) to authenticated, service_role;

-- Why: a before trigger, so dedup's "keep the higher confidence", revisions and imports are capped
-- as inserts are; the category the model chose or the claim's own words make it sensitive.
create or replace function memory_private.cap_sensitive_confidence()
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

revoke execute on all routines in schema memory, memory_private from public;
