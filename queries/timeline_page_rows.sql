-- timeline_page_rows: where a timeline page lies, from counts rather than a sort, so that
-- the page query (timeline_events.sql, $from_ns and $bound_ns) reads only that stretch
-- however deep the page is. Rows (events and idle gaps, as timeline_events numbers them)
-- are counted per time bin in aggregate passes; the page is in the bins where the running
-- count passes $offset and $rows, and its rows are numbered from the rows before them.
-- The NVTX ranges counted are timeline_events.sql's: those of nvtx_ranges() (a range left
-- open at the end of the capture included). Needs nvtx_ranges() (Trace.load_nvtx_text).
--
-- The idle gaps are found without sorting the events: in bins of $gap_ns + 1 ns per device,
-- two starts in one bin are at most $gap_ns apart, so a gap can only end at a bin's first
-- start, and it is there when that start is more than $gap_ns after the latest end of the
-- device's earlier bins (one window over the bins, not over the events). Starts that tie
-- cannot have a gap between them (the earlier one's end is at least their start), so this
-- is exactly the rule of timeline_events.sql.
--
-- Parameters (filters as timeline_events.sql; NULL means "no filter"):
--   $api               BOOLEAN  count CUDA API calls too
--   $gap_ns            BIGINT   idle gaps longer than this are rows, ns
--   $device, $stream   BIGINT   GPU rows of that device / stream (NVTX and API stay)
--   $pid               BIGINT   operating-system process id: every kind of row
--   $start_ns, $end_ns BIGINT   time window, ns from session start
--   $selection         BIGINT   work selection id (work_selection, e.g. --nvtx), or NULL
--   $bin_ns            BIGINT   about how wide a counting bin is, ns (rounded down to a
--                               multiple of $gap_ns + 1, at least one such)
--   $offset            BIGINT   rows before the page
--   $rows              BIGINT   offset + limit of the page (> $offset)
--
-- Columns:
--   events       BIGINT  kernels, memcpys, memsets, graph-level CUDA graph replays, NVTX
--                        ranges (and API calls) in the window
--   total_rows   BIGINT  those and the idle gaps in the window: the rows of the timeline
--   from_ns      BIGINT  the page's rows start at or after this, ns from session start (a
--                        bin's start; past the last row when $offset >= total_rows); NULL
--                        when there are no rows
--   rows_before  BIGINT  rows that start before from_ns (they all come before the page)
--   bound_ns     BIGINT  the page's rows start at or before this, ns from session start (a
--                        bin's last ns); NULL when the page reaches the last row
--   edge_devices BIGINT[] the devices with GPU rows, ascending; with the two lists below
--                        (element i is edge_devices[i]'s), what the gaps of the page depend
--                        on outside it, for timeline_events.sql's $edge_* so that it reads
--                        only the page's stretch. NULL with $start_ns or $end_ns
--   edge_busy    BIGINT[] the latest end of the device's rows that start before from_ns
--                        (NULL: none), ns from session start
--   edge_next    BIGINT[] the first start after bound_ns (NULL: none), ns from session start
--   gpu_events   BIGINT  the kernels, memcpys, memsets and graph replays in the window
--                        (without filters the records the whole trace keeps: timeline.py
--                        then needs no scan to count the damaged ones when that is every
--                        row of their tables)
WITH gpu AS (
    SELECT deviceId AS device, start, "end"
    FROM filtered_kernels($device, $pid, $stream, NULL, NULL, selection := $selection)
    UNION ALL
    SELECT deviceId, start, "end"
    FROM filtered_memcpys($device, $pid, $stream, NULL, NULL, selection := $selection)
    UNION ALL
    SELECT deviceId, start, "end"
    FROM filtered_memsets($device, $pid, $stream, NULL, NULL, selection := $selection)
    UNION ALL
    SELECT deviceId, start, "end"
    FROM filtered_graph_replays($device, $pid, $stream, NULL, NULL, selection := $selection)
),
-- fine bins: floor(start / ($gap_ns + 1)), exact for negative starts too. Outside the
-- window only two things matter per device: the latest end before it (every such event
-- starts before any gap of the window ends, and one in the bin of a gap's end would have
-- ruled the gap out all the same) and the first start after it (the end of a gap that
-- spans $end_ns); one bin each, first and last, keeps a narrow window's aggregate small.
fine AS (
    SELECT
        device,
        CASE
            WHEN "end" < $start_ns THEN -9223372036854775808
            WHEN start >= $end_ns THEN 9223372036854775807
            ELSE (start - (start % ($gap_ns + 1) + $gap_ns + 1) % ($gap_ns + 1)) // ($gap_ns + 1)
        END AS bin,
        min(start) AS first_start,
        max("end") AS last_end,
        count(*) FILTER (WHERE in_window(start, "end", $start_ns, $end_ns)) AS events
    FROM gpu
    GROUP BY ALL
),
gaps AS (
    SELECT busy_until AS start
    FROM (
        SELECT
            first_start,
            max(last_end) OVER (
                PARTITION BY device ORDER BY bin
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS busy_until
        FROM fine
    )
    WHERE first_start - busy_until > $gap_ns
      AND in_window(busy_until, first_start, $start_ns, $end_ns)
),
-- fine bins per counting bin, so that a fine bin lies in one counting bin
width AS (SELECT greatest(1, $bin_ns // ($gap_ns + 1)) AS per, per * ($gap_ns + 1) AS ns),
host AS (
    SELECT start
    FROM nvtx_ranges()
    WHERE of_process(global_tid, $pid) AND in_window(start, "end", $start_ns, $end_ns)
    UNION ALL
    SELECT start
    FROM runtime_calls
    WHERE $api AND of_process(globalTid, $pid) AND in_window(start, "end", $start_ns, $end_ns)
),
binned AS (
    SELECT (bin - (bin % per + per) % per) // per AS bin, events AS rows, events
    FROM fine, width
    WHERE events > 0  -- not the bins outside the window
    UNION ALL
    SELECT (start - (start % ns + ns) % ns) // ns, 1, 0
    FROM gaps, width
    UNION ALL
    SELECT (start - (start % ns + ns) % ns) // ns, 1, 1
    FROM host, width
),
bins AS (
    SELECT bin, sum(rows) AS rows, sum(events) AS events
    FROM binned
    GROUP BY bin
    HAVING sum(rows) > 0
),
running AS (
    SELECT bin, rows, events, sum(rows) OVER (ORDER BY bin ROWS UNBOUNDED PRECEDING) AS through
    FROM bins
),
page AS (
    SELECT
        CAST(coalesce(sum(events), 0) AS BIGINT) AS events,
        CAST(coalesce(sum(rows), 0) AS BIGINT) AS total_rows,
        coalesce(min(bin) FILTER (WHERE through > $offset), max(bin) + 1) * any_value(ns)
            AS from_ns,
        CAST(coalesce(arg_min(through - rows, bin) FILTER (WHERE through > $offset), sum(rows), 0)
             AS BIGINT) AS rows_before,
        (min(bin) FILTER (WHERE through >= $rows) + 1) * any_value(ns) - 1 AS bound_ns
    FROM running, width
),
-- Without a window every fine bin lies wholly before from_ns, in the page's stretch, or
-- after bound_ns (both are edges of counting bins, which are whole fine bins), so a bin's
-- first start says on which side all its rows are. (A window's first and last fine bins
-- hold rows from either side: then the page query finds these itself.)
edges AS (
    SELECT
        list(device ORDER BY device) AS edge_devices,
        list(busy ORDER BY device) AS edge_busy,
        list(after ORDER BY device) AS edge_next
    FROM (
        SELECT
            device,
            max(last_end) FILTER (WHERE first_start < page.from_ns) AS busy,
            min(first_start) FILTER (WHERE first_start > page.bound_ns) AS after
        FROM fine, page
        WHERE $start_ns IS NULL AND $end_ns IS NULL
        GROUP BY device
    )
),
-- One count for the four kinds: a count per kind (FILTER on a kind column) cost the 5M-kernel
-- trace's first page 0.25 of its 3.3 CPU s; timeline.py splits the total by the tables' rowids.
gpu_total AS (
    SELECT CAST(coalesce(sum(events), 0) AS BIGINT) AS gpu_events FROM fine
)
SELECT page.*, edges.*, gpu_total.*
FROM page, edges, gpu_total
