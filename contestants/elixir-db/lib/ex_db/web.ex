defmodule ExDb.Web do
  @moduledoc """
  The Yaws appmod mounted at `/`: `GET /db` lists the drivers served,
  `GET /db/<driver>?a=<id>&b=<id>` answers rows `min(a, b)` and `max(a, b)`
  (that row twice when `a == b`), read in one round trip by that driver.

  Refusals, all JSON: an unknown driver 404 (naming the ones served), an id
  that is not an integer in 1..2^31-1 400 (`a` or `b` given twice too), an id
  without a row 404, the database unreachable or failing 503 (within
  `ExDb.Driver.timeout/0`, 1.5 s), another method on those paths 405 with
  `Allow: GET, HEAD`, any other path 404.
  """

  require Record
  Record.defrecordp(:arg, Record.extract(:arg, from_lib: "yaws/include/yaws_api.hrl"))
  Record.defrecordp(:http_request, Record.extract(:http_request, from_lib: "yaws/include/yaws_api.hrl"))

  require Logger

  @json ~c"application/json"
  @allow ~c"GET, HEAD"
  @routes "GET /db, GET /db/{driver}?a=<id>&b=<id>"
  @max_id 2_147_483_647
  @key {__MODULE__, :drivers}

  @doc "Publishes the served drivers (`[module]`, in listing order)."
  def serve(modules) do
    list =
      :jiffy.encode(%{
        "drivers" =>
          for m <- modules do
            {[{"name", m.name()}, {"database", m.database()}, {"layer", m.layer()}, {"pool", m.pool()}]}
          end
      })

    :persistent_term.put(@key, {Map.new(modules, &{m_name(&1), &1}), Enum.map_join(modules, ", ", & &1.name()), list})
  end

  defp m_name(m), do: m.name()

  def out(a) do
    route(arg(a, :server_path), http_request(arg(a, :req), :method), a)
  rescue
    e ->
      Logger.error("request failed: " <> Exception.format(:error, e, __STACKTRACE__))
      error(500, "the server failed on this request (#{Exception.message(e)}); this is a bug in the contestant")
  end

  defp route(~c"/db", m, _) when m in [:GET, :HEAD] do
    {_, _, list} = :persistent_term.get(@key)
    [{:status, 200}, {:content, @json, list}]
  end

  defp route(~c"/db/" ++ driver = path, m, a) do
    cond do
      Enum.member?(driver, ?/) -> unread(a, no_route(path, m))
      m in [:GET, :HEAD] -> read(List.to_string(driver), arg(a, :querydata))
      true -> unread(a, not_allowed(path, m))
    end
  end

  defp route(~c"/db" = path, m, a), do: unread(a, not_allowed(path, m))
  defp route(path, m, a), do: unread(a, no_route(path, m))

  # A body larger than Yaws's first read (10 KiB) is not read further: the
  # answer closes the connection, so that the rest is not taken for the next
  # request.
  defp unread(a, reply) do
    case arg(a, :clidata) do
      {:partial, _} -> [{:header, {:connection, ~c"close"}} | reply]
      _ -> reply
    end
  end

  defp no_route(path, m), do: error(404, "no route for #{method(m)} #{path}; this server answers #{@routes}")

  defp not_allowed(path, m),
    do: [{:header, {:allow, @allow}} | error(405, "#{path} does not accept #{method(m)}; allowed: #{@allow}")]

  defp method(m) when is_atom(m), do: Atom.to_string(m)
  defp method(m), do: List.to_string(m)

  defp read(name, query) do
    {drivers, served, _} = :persistent_term.get(@key)

    with {:ok, mod} <- driver(drivers, served, name),
         {:ok, a, b} <- ids(query) do
      lo = min(a, b)
      hi = max(a, b)

      case mod.fetch([lo, hi]) do
        {:ok, rows} -> answer(rows, lo, hi)
        {:error, msg} -> error(503, msg <> "; retry when the database is back")
      end
    end
  end

  defp driver(drivers, served, name) do
    case Map.fetch(drivers, name) do
      {:ok, mod} ->
        {:ok, mod}

      :error ->
        case List.keyfind(ExDb.Driver.all(), name, 0) do
          {_, var} ->
            error(404, "driver #{inspect(name)} is not served here: start the server with #{var} to serve it; " <>
              "this server serves: #{served}")

          nil ->
            all = Enum.map_join(ExDb.Driver.all(), ", ", &elem(&1, 0))
            error(404, "unknown driver #{inspect(name)}; this server serves: #{served} (this contestant's drivers: #{all})")
        end
    end
  end

  defp answer(rows, lo, hi) do
    with {:ok, r1} <- row(rows, lo),
         {:ok, r2} <- row(rows, hi) do
      [{:status, 200}, {:content, @json, :jiffy.encode([r1, r2])}]
    end
  end

  defp row(rows, id) do
    case List.keyfind(rows, id, 0) do
      {id, name, price} ->
        {:ok, {[{"id", id}, {"name", name}, {"price", price}]}}

      nil ->
        error(404, "no row with id #{id} in items (the data set has ids 1..=10000); ask for an id that exists")
    end
  end

  # The raw query string, as the contract reads it: `a` and `b` (defaults 1
  # and 2), each at most once, decimal digits only; other parameters ignored.
  defp ids(:undefined), do: {:ok, 1, 2}
  defp ids(query), do: ids(:string.split(query, ~c"&", :all), nil, nil)

  defp ids([], a, b), do: {:ok, a || 1, b || 2}
  defp ids([[] | rest], a, b), do: ids(rest, a, b)

  defp ids([pair | rest], a, b) do
    {key, value} =
      case :string.split(pair, ~c"=") do
        [k, v] -> {k, v}
        [k] -> {k, []}
      end

    case key do
      ~c"a" when a != nil -> duplicate("a")
      ~c"b" when b != nil -> duplicate("b")
      ~c"a" -> with {:ok, id} <- id("a", value), do: ids(rest, id, b)
      ~c"b" -> with {:ok, id} <- id("b", value), do: ids(rest, a, id)
      _ -> ids(rest, a, b)
    end
  end

  defp duplicate(p), do: error(400, "query parameter `#{p}` appears more than once; send it once")

  defp id(param, value) do
    with true <- value != [] and Enum.all?(value, &(&1 in ?0..?9)),
         n when n in 1..@max_id <- List.to_integer(value) do
      {:ok, n}
    else
      _ ->
        error(400, "query parameter `#{param}` must be an integer in 1..=#{@max_id}, got #{inspect(List.to_string(value))}")
    end
  end

  defp error(status, message) do
    [{:status, status}, {:content, @json, :jiffy.encode(%{"error" => message}, [:force_utf8])}]
  end
end
