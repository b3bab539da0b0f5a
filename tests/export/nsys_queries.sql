-- nsys_queries.sql - queries written against the schema of an nsys SQLite
-- export (shared/reference/nsys.md section 5), as users write them.  Each
-- query is named by a "-- name:" line; tests/export/compare_stats.py runs
-- them on gpuscope's SQLite export and compares with `gpuscope stats`.

-- name: kernels
SELECT s.value AS name, COUNT(*) AS n, SUM(k.end - k.start) AS total
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName
GROUP BY s.value;

-- name: api
SELECT s.value AS name, COUNT(*) AS n, SUM(r.end - r.start) AS total
FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId
GROUP BY s.value;

-- name: memops_time
SELECT '[CUDA memcpy ' || e.label || ']' AS name, COUNT(*) AS n, SUM(m.end - m.start) AS total,
       SUM(m.bytes) AS bytes
FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind
GROUP BY e.label
UNION ALL
SELECT '[CUDA memset]', COUNT(*), SUM(end - start), SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET
HAVING COUNT(*) > 0;

-- name: nvtx
-- "DOMAIN:NAME" for a range in a named domain (joined through its domain's
-- create event, eventType 75, in the same process), as nvtx_sum names it
SELECT COALESCE((SELECT d.text || ':' FROM NVTX_EVENTS AS d
                 WHERE d.eventType = 75 AND d.domainId = n.domainId
                   AND d.globalTid / 0x1000000 = n.globalTid / 0x1000000 LIMIT 1), '')
       || COALESCE(n.text, s.value) AS name,
       CASE n.eventType WHEN 59 THEN 'PushPop' WHEN 60 THEN 'StartEnd' END AS style,
       COUNT(*) AS n, SUM(n.end - n.start) AS total
FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL
GROUP BY 1, 2;

-- name: osrt
SELECT s.value AS name, COUNT(*) AS n, SUM(o.end - o.start) AS total
FROM OSRT_API AS o JOIN StringIds AS s ON s.id = o.nameId
GROUP BY s.value;

-- name: api_threads
SELECT DISTINCT globalTid / 0x1000000 % 0x1000000 AS pid, globalTid % 0x1000000 AS tid
FROM CUPTI_ACTIVITY_KIND_RUNTIME;

-- name: launches_with_kernels
SELECT COUNT(*) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k
  ON k.correlationId = r.correlationId AND k.globalPid / 0x1000000 = r.globalTid / 0x1000000;

-- name: device_memory_kinds
SELECT e.label AS kind, COUNT(*) AS n FROM CUDA_GPU_MEMORY_USAGE_EVENTS AS u
JOIN ENUM_CUDA_MEM_KIND AS e ON e.id = u.memKind GROUP BY e.label;
