defmodule ExDb.Repo do
  @moduledoc """
  The layer people write over a driver when Ecto cannot be had (Ecto and its
  adapters are on Hex): a repository that takes a schema module
  (`ExDb.Repo.Schema`) and a query built from it (`ExDb.Repo.Query`), checks
  the query's values against the schema's types, has an adapter build the SQL
  (quoted names, table alias `s0`, like Ecto's), runs it on a pool, and loads
  every row into the schema's struct, casting each column by its type. It is
  a stand-in for the original experiment's Ecto row, not Ecto: it does per
  request what Ecto does per request (build the query, cast the parameters,
  run a cached prepared statement where the driver has them, load structs),
  without Ecto's query planner, changesets or telemetry.

  Adapters: `ExDb.Repo.Postgres` (p1_pgsql: `= ANY($1)` with the ids as one
  array parameter, as Ecto's Postgres adapter writes `in ^list`; a statement
  prepared the first time a connection sees that SQL, as Ecto's named
  statements) and `ExDb.Repo.MySQL` (p1_mysql: the values as SQL literals,
  since the driver has no prepared statements).
  """

  defstruct [:adapter, :pool, :timeout]

  @doc "Every row the query selects, as structs: `{:ok, [struct]}` or `{:error, message}`."
  def all(%ExDb.Repo.Query{schema: schema} = query, %__MODULE__{} = repo) do
    types = schema.__schema__(:types)

    with :ok <- check_values(query, types) do
      {sql, params} = repo.adapter.to_sql(query)

      with {:ok, rows} <- repo.adapter.execute(repo, sql, params) do
        fields = schema.__schema__(:fields)
        {:ok, Enum.map(rows, &load(schema, fields, types, &1))}
      end
    end
  end

  defp check_values(query, types) do
    bad =
      for {:in, field, values} <- query.wheres, v <- values, not valid?(Map.fetch!(types, field), v),
          do: {field, v}

    case bad do
      [] -> :ok
      [{field, v} | _] -> {:error, "#{inspect(v)} is not a value of #{field}'s type #{types[field]}"}
    end
  end

  defp valid?(:integer, v), do: is_integer(v)
  defp valid?(:string, v), do: is_binary(v)

  defp load(schema, fields, types, row) do
    struct!(schema, Enum.zip_with(fields, row, fn f, v -> {f, cast(Map.fetch!(types, f), v)} end))
  end

  defp cast(_, nil), do: nil
  defp cast(:integer, v) when is_integer(v), do: v
  defp cast(:integer, v) when is_binary(v), do: String.to_integer(v)
  defp cast(:string, v) when is_binary(v), do: v
end

defmodule ExDb.Repo.Postgres do
  @moduledoc "The p1_pgsql adapter of `ExDb.Repo`."

  def to_sql(%ExDb.Repo.Query{schema: schema} = q) do
    cols = Enum.map_join(schema.__schema__(:fields), ", ", &~s(s0."#{&1}"))
    {wheres, params} = wheres(q.wheres, 1, [], [])
    order = if q.order_bys == [], do: "", else: " ORDER BY " <> Enum.map_join(q.order_bys, ", ", &~s(s0."#{&1}"))
    {~s(SELECT #{cols} FROM "#{schema.__schema__(:source)}" AS s0#{wheres}#{order}), params}
  end

  defp wheres([], _, [], []), do: {"", []}
  defp wheres([], _, sql, params), do: {" WHERE " <> Enum.join(Enum.reverse(sql), " AND "), Enum.reverse(params)}

  # An array parameter in PostgreSQL's text form, '{1,2}': one statement
  # whatever the number of values.
  defp wheres([{:in, field, values} | rest], n, sql, params) do
    array = ~c"{" ++ Enum.intersperse(Enum.map(values, &Integer.to_charlist/1), ?,) ++ ~c"}"
    wheres(rest, n + 1, [~s[(s0."#{field}" = ANY($#{n}))] | sql], [array | params])
  end

  @doc "Runs the SQL as a prepared statement, prepared on first use per connection."
  def execute(repo, sql, params) do
    name = ~c"ex_repo_" ++ Integer.to_charlist(:erlang.phash2(sql), 36)

    ExDb.Pool.run(repo.pool, fn pid ->
      with :ok <- prepared(repo, pid, name, sql) do
        case ExDb.Pg.execute(pid, name, params, repo.timeout) do
          {:ok, {_command, rows}} -> {:ok, for(row <- rows, do: for({_type, v} <- row, do: v))}
          {:error, desc} -> {:error, ExDb.Pg.message(desc)}
        end
      end
    end)
  end

  defp prepared(repo, pid, name, sql) do
    if ExDb.Pool.conn_member?(repo.pool, pid, name) do
      :ok
    else
      case :gen_server.call(pid, {:prepare, {name, String.to_charlist(sql)}}, repo.timeout) do
        {:ok, _status, _params, _results} ->
          remember(repo, pid, name)

        {:error, desc} ->
          # Two requests may prepare it on one connection at once.
          if List.keyfind(desc, :code, 0) == {:code, "42P05"},
            do: remember(repo, pid, name),
            else: {:error, ExDb.Pg.message(desc)}
      end
    end
  end

  defp remember(repo, pid, name) do
    ExDb.Pool.conn_put(repo.pool, pid, name)
    :ok
  end
end

defmodule ExDb.Repo.MySQL do
  @moduledoc "The p1_mysql adapter of `ExDb.Repo`."

  def to_sql(%ExDb.Repo.Query{schema: schema} = q) do
    cols = Enum.map_join(schema.__schema__(:fields), ", ", &"s0.`#{&1}`")

    wheres =
      case q.wheres do
        [] ->
          ""

        ws ->
          " WHERE " <>
            Enum.map_join(ws, " AND ", fn {:in, f, vs} -> "(s0.`#{f}` IN (#{Enum.map_join(vs, ",", &literal/1)}))" end)
      end

    order = if q.order_bys == [], do: "", else: " ORDER BY " <> Enum.map_join(q.order_bys, ", ", &"s0.`#{&1}`")
    {"SELECT #{cols} FROM `#{schema.__schema__(:source)}` AS s0#{wheres}#{order}", []}
  end

  # Values checked against the schema's types by ExDb.Repo: integers as they
  # are, strings quoted by the driver.
  defp literal(v) when is_integer(v), do: Integer.to_string(v)
  defp literal(v) when is_binary(v), do: List.to_string(:p1_mysql.quote(String.to_charlist(v)))

  def execute(repo, sql, []) do
    ExDb.Pool.run(repo.pool, fn pid -> ExDb.Mysql.query(pid, sql, repo.timeout) end)
  end
end
