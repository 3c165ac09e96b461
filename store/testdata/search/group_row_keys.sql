SELECT coalesce(-p.package_group_id, i.id) FROM unnest(@ids::bigint[]) WITH ORDINALITY AS i(id, n)
LEFT JOIN packages p ON p.id = i.id ORDER BY i.n
