-- Issue 37: an automatic refund's effect statement commits in its own round trip (docs/decisions/029). When the
-- order did not move (a ceiling refused, or the order had moved on), the statement raises this error instead, so
-- the COMMIT sent with it never runs and the call is checked again in a transaction that commits on its own.
CREATE FUNCTION toolgate_effect_not_moved() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'the effect did not move its order' USING ERRCODE = 'TG001';
END
$$;
