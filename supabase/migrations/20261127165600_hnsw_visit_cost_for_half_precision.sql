-- A filtered HNSW visit, measured again on half-precision vectors, costs 12.7 to 22.4 exact
-- distances (10.3 to 13.9 in full precision, where the setting was 10): the exact scan got cheaper
-- than the index's steps. A database whose team changed the setting keeps its value.
update memory_private.settings set value = '12'::jsonb
where key = 'hnsw_visit_cost' and value = '10'::jsonb;
