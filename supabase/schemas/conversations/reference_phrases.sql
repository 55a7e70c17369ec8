-- Why: seed 000's "yung una" / "the first one": the phrases are data, so a team adds a language
-- by inserting rows. Positions count within the turns the prompt shows (the newest N): 1 is the
-- oldest of them, -1 the most recent ("earlier", "kanina").
create table memory.reference_phrases (
    phrase text primary key check (phrase = lower(btrim(phrase)) and phrase ~ '[^[:space:]]'),
    position integer not null check (position <> 0),
    language text not null check (language ~ '^[a-z]{2,3}$')
);

comment on table memory.reference_phrases is 'Phrases that point at an earlier turn; position 1 = first shown, -1 = latest.';

alter table memory.reference_phrases enable row level security;

create policy "Signed-in users read reference phrases" on memory.reference_phrases
for select to authenticated
using (true);

grant select on memory.reference_phrases to authenticated;
grant select, insert, update, delete on memory.reference_phrases to service_role;

insert into memory.reference_phrases (phrase, position, language) values
('yung una', 1, 'fil'), ('una', 1, 'fil'), ('unang', 1, 'fil'),
('yung pangalawa', 2, 'fil'), ('pangalawa', 2, 'fil'), ('ikalawa', 2, 'fil'),
('yung pangatlo', 3, 'fil'), ('pangatlo', 3, 'fil'), ('ikatlo', 3, 'fil'),
('yung pang-apat', 4, 'fil'), ('pang-apat', 4, 'fil'), ('ikaapat', 4, 'fil'),
('yung panglima', 5, 'fil'), ('panglima', 5, 'fil'), ('ikalima', 5, 'fil'),
('yung kanina', -1, 'fil'), ('kanina', -1, 'fil'), ('yung huli', -1, 'fil'), ('huli', -1, 'fil'),
('the first one', 1, 'en'), ('first', 1, 'en'), ('the second one', 2, 'en'), ('second', 2, 'en'),
('the third one', 3, 'en'), ('third', 3, 'en'), ('the fourth one', 4, 'en'), ('fourth', 4, 'en'),
('the fifth one', 5, 'en'), ('fifth', 5, 'en'),
('earlier', -1, 'en'), ('previous', -1, 'en'), ('last one', -1, 'en'), ('the last one', -1, 'en'),
('the previous one', -1, 'en'), ('the one before', -2, 'en'), ('second to last', -2, 'en');
