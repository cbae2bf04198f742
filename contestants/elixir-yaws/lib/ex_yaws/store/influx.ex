defmodule ExYaws.Store.Influx do
  @moduledoc """
  InfluxDB 1.x (the original experiment's store) over its HTTP API with OTP's
  `:httpc`, in a profile of its own (`:ex_yaws_influx`).

  An event is one point in line protocol, `events,source=S,type=T value=V NS`
  POSTed to `/write?db=DB&precision=ns`; InfluxDB answers 204 once the point
  is in its WAL. Then the count is InfluxQL `SELECT COUNT(value) FROM events`
  (`/query`), the original experiment's algorithm: parse, build the point,
  write, count, answer.

  - InfluxDB keeps one point per (measurement, tag set, timestamp): two events
    with the same type, source and millisecond would overwrite each other and
    the count would be short. Each write adds a distinct sub-millisecond offset,
    `rem(counter, 1_000_000)` nanoseconds, to `ms * 1_000_000` (the counter is
    one `:atomics` cell, starting from a value drawn at boot so that a
    restarted server does not reuse the offsets of the last one).
  - InfluxDB stores nanoseconds in a signed 64-bit integer: a timestamp after
    9223372036853 ms (2262-04-11) cannot be stored, and is refused with
    400 before anything is written.

  Connections (`:httpc.set_options/2`): `max_sessions` = the pool rule of
  `ExYaws.Config.pool_size/0` (4 per scheduler online, at least 8) persistent
  connections to InfluxDB; `max_keep_alive_length` 8 requests may queue on
  one of them before httpc opens a one-off connection (with the pool's
  sessions all full); `keep_alive_timeout` 60 s; no pipelining (InfluxDB
  answers one request at a time per connection anyway). Each exchange has a
  5 s timeout (2 s to connect): a store that does not answer gets 503.
  """

  @behaviour ExYaws.Store
  @profile :ex_yaws_influx
  @key {__MODULE__, :conf}
  # The last millisecond whose nanoseconds (plus the offset) fit in an i64.
  @max_ms 9_223_372_036_853
  @http_opts [timeout: 5_000, connect_timeout: 2_000]
  @opts [body_format: :binary, full_result: false]

  # The httpc profile runs under inets' own supervisor: nothing of ours.
  @impl true
  def children(_conf), do: []

  @impl true
  def started, do: :ok

  @impl true
  def prepare(conf) do
    start(conf)
    c = :persistent_term.get(@key)

    with {:ok, _} <- query(c, "CREATE DATABASE \"#{c.db}\""),
         {:ok, _} <- count() do
      :ok
    end
  end

  # Starts the httpc profile and publishes the URLs.
  defp start(%{host: host, port: port, db: db}) do
    case :inets.start(:httpc, profile: @profile) do
      {:ok, _} -> :ok
      {:error, {:already_started, _}} -> :ok
    end

    :ok =
      :httpc.set_options(
        [max_sessions: ExYaws.Config.pool_size(), max_keep_alive_length: 8, keep_alive_timeout: 60_000],
        @profile
      )

    base = "http://#{host}:#{port}"
    dbq = "db=" <> URI.encode_www_form(db)

    :persistent_term.put(@key, %{
      base: base,
      db: db,
      write: String.to_charlist("#{base}/write?#{dbq}&precision=ns"),
      count: String.to_charlist("#{base}/query?#{dbq}&q=" <> URI.encode_www_form("SELECT COUNT(value) FROM events")),
      seq: seq(),
      label: "InfluxDB at #{host}:#{port}/#{db}"
    })
  end

  defp seq do
    ref = :atomics.new(1, signed: false)
    :atomics.put(ref, 1, :rand.uniform(1_000_000_000))
    ref
  end

  @impl true
  def append({_type, _source, _value, ts}) when ts > @max_ms do
    {:error,
     {:unstorable,
      "InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most #{@max_ms} with this store, got #{ts}"}}
  end

  def append({type, source, value, ts}) do
    c = :persistent_term.get(@key)
    ns = ts * 1_000_000 + rem(:atomics.add_get(c.seq, 1, 1), 1_000_000)
    # type and source are [A-Za-z0-9_.:-]: nothing to escape in line protocol.
    line =
      IO.iodata_to_binary([
        "events,source=",
        source,
        ",type=",
        type,
        " value=",
        :erlang.float_to_binary(value, [:short]),
        ?\s,
        Integer.to_string(ns)
      ])

    case :httpc.request(:post, {c.write, [], ~c"text/plain; charset=utf-8", line}, @http_opts, @opts, @profile) do
      {:ok, {204, _}} -> count()
      {:ok, {status, body}} -> {:error, "#{c.label} refused the write: HTTP #{status} #{String.trim(body)}"}
      {:error, reason} -> {:error, unavailable(c, reason)}
    end
  end

  @impl true
  def count do
    c = :persistent_term.get(@key)

    case :httpc.request(:get, {c.count, []}, @http_opts, @opts, @profile) do
      {:ok, {200, body}} -> parse_count(c, body)
      {:ok, {status, body}} -> {:error, "#{c.label} refused the count: HTTP #{status} #{String.trim(body)}"}
      {:error, reason} -> {:error, unavailable(c, reason)}
    end
  end

  # {"results":[{"statement_id":0,"series":[{"name":"events","columns":["time","count"],
  # "values":[["1970-01-01T00:00:00Z",N]]}]}]}; no "series" when there is no event.
  defp parse_count(c, body) do
    case :jiffy.decode(body, [:return_maps]) do
      %{"results" => [%{"series" => [%{"values" => [[_, n] | _]} | _]} | _]} when is_integer(n) -> {:ok, n}
      %{"results" => [%{"error" => e} | _]} -> {:error, "#{c.label} failed the count: #{e}"}
      %{"results" => [_ | _]} -> {:ok, 0}
      other -> {:error, "#{c.label} answered the count with #{inspect(other)}"}
    end
  end

  # An InfluxQL statement that changes something (POST /query).
  defp query(c, q, db \\ nil) do
    dbq = if db, do: "db=" <> URI.encode_www_form(db) <> "&", else: ""
    url = String.to_charlist("#{c.base}/query?#{dbq}q=" <> URI.encode_www_form(q))

    case :httpc.request(:post, {url, [], ~c"application/x-www-form-urlencoded", ""}, @http_opts, @opts, @profile) do
      {:ok, {200, body}} ->
        case :jiffy.decode(body, [:return_maps]) do
          %{"results" => [%{"error" => e} | _]} -> {:error, "#{c.label}: #{q} failed: #{e}"}
          json -> {:ok, json}
        end

      {:ok, {status, body}} ->
        {:error, "#{c.label}: #{q} got HTTP #{status} #{String.trim(body)}"}

      {:error, reason} ->
        {:error, unavailable(c, reason)}
    end
  end

  defp unavailable(c, reason), do: "#{c.label} is unavailable (#{why(reason)}); retry later"

  defp why({:failed_connect, [_, {_, _, posix}]}) when is_atom(posix), do: "cannot connect: #{:inet.format_error(posix)}"
  defp why(:timeout), do: "no answer within 5 s"
  defp why(:socket_closed_remotely), do: "it closed the connection"
  defp why(other), do: inspect(other)

  @impl true
  def reset(conf) do
    start(conf)
    c = :persistent_term.get(@key)

    with {:ok, _} <- query(c, "CREATE DATABASE \"#{c.db}\""),
         {:ok, _} <- query(c, "DROP MEASUREMENT events", c.db) do
      :ok
    else
      # An empty database has no measurement to drop.
      {:error, msg} -> if msg =~ "measurement not found", do: :ok, else: {:error, msg}
    end
  end
end
