SELECT coalesce(-p.package_group_id, p.id) FROM unnest(@ids::bigint[]) WITH ORDINALITY AS i(id, n)
JOIN packages p ON p.id = i.id ORDER BY i.n
