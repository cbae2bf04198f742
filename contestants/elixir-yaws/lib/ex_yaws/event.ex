defmodule ExYaws.Event do
  @moduledoc """
  Parses and validates the body of `POST /events` (the contract's table):

  | field       | rule                                                     |
  |-------------|----------------------------------------------------------|
  | `type`      | required string, 1-64 characters of `[A-Za-z0-9_.:-]`   |
  | `source`    | same charset, default `"unknown"`                        |
  | `value`     | finite JSON number, default `1.0`                        |
  | `timestamp` | JSON integer, 0 <= t < 2^53 milliseconds, default now    |

  `null` takes the default; unknown keys are ignored. jiffy decodes the body
  into its proplist form (`{[{key, value}]}`), which keeps every key as sent,
  so a key given twice is seen and refused; jiffy itself refuses trailing
  bytes after the object. Every refusal names the field at fault.
  """

  @max_ts 9_007_199_254_740_992
  @names "1-64 characters from A-Z a-z 0-9 _ . : -"
  @example ~s(send an object like {"type": "page_view"})

  @doc "`{:ok, {type, source, value, timestamp_ms}}` or `{:error, message}`."
  def parse(body) when is_binary(body) do
    try do
      :jiffy.decode(body, [])
    catch
      :error, reason -> {:error, json_error(reason)}
    else
      {pairs} when is_list(pairs) -> fields(pairs, %{})
      other -> {:error, "the body must be a JSON object like {\"type\": \"page_view\"}, not #{kind(other)}"}
    end
  end

  # Collects the known fields, refusing any key given twice.
  defp fields([{key, value} | rest], seen) do
    if Map.has_key?(seen, key) do
      {:error, "field `#{printable(key)}` appears more than once; send it once"}
    else
      fields(rest, Map.put(seen, key, value))
    end
  end

  defp fields([], seen) do
    with {:ok, type} <- required_name(seen, "type"),
         {:ok, source} <- optional_name(seen, "source"),
         {:ok, value} <- value(Map.get(seen, "value", :null)),
         {:ok, ts} <- timestamp(Map.get(seen, "timestamp", :null)) do
      {:ok, {type, source, value, ts}}
    end
  end

  defp required_name(seen, field) do
    case Map.fetch(seen, field) do
      :error -> {:error, "field `#{field}` is required: a string of #{@names}"}
      {:ok, v} -> name(field, v)
    end
  end

  defp optional_name(seen, field) do
    case Map.get(seen, field, :null) do
      :null -> {:ok, "unknown"}
      v -> name(field, v)
    end
  end

  defp name(field, v) when is_binary(v) do
    case bad_char(v, 0) do
      nil when byte_size(v) in 1..64 ->
        {:ok, v}

      nil ->
        {:error, "field `#{field}` must be 1-64 characters long, got #{byte_size(v)}"}

      {char, at} ->
        if String.length(v) > 64 do
          {:error, "field `#{field}` must be 1-64 characters long, got #{String.length(v)}"}
        else
          {:error, "field `#{field}` may only contain A-Z a-z 0-9 _ . : -; found '#{char}' at character #{at}"}
        end
    end
  end

  defp name(field, v), do: {:error, "field `#{field}` must be a string of #{@names}, not #{kind(v)}"}

  # The first character outside the charset, with its index in characters.
  defp bad_char(<<c, rest::binary>>, i)
       when c in ?a..?z or c in ?A..?Z or c in ?0..?9 or c in [?_, ?., ?:, ?-],
       do: bad_char(rest, i + 1)

  defp bad_char(<<>>, _), do: nil
  defp bad_char(<<c::utf8, _::binary>>, i), do: {<<c::utf8>>, i}

  defp value(:null), do: {:ok, 1.0}
  defp value(v) when is_float(v), do: {:ok, v}

  defp value(v) when is_integer(v) do
    {:ok, :erlang.float(v)}
  rescue
    ArgumentError -> {:error, "field `value` must be a finite number, got an integer beyond the range of a double"}
  end

  defp value(v), do: {:error, "field `value` must be a finite number, not #{kind(v)}"}

  defp timestamp(:null), do: {:ok, System.os_time(:millisecond)}
  defp timestamp(t) when is_integer(t) and t >= 0 and t < @max_ts, do: {:ok, t}

  defp timestamp(t) when is_integer(t),
    do: {:error, "field `timestamp` must be in 0 <= t < 2^53 (#{@max_ts}), got #{t}"}

  defp timestamp(t) when is_float(t),
    do:
      {:error,
       "field `timestamp` must be an integer number of milliseconds, got #{:erlang.float_to_binary(t, [:short])}"}

  defp timestamp(t),
    do:
      {:error,
       "field `timestamp` must be an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53, not #{kind(t)}"}

  defp kind(v) when is_binary(v), do: "a string"
  defp kind(v) when is_number(v), do: "a number"
  defp kind(v) when is_boolean(v), do: "a boolean"
  defp kind(:null), do: "null"
  defp kind(v) when is_list(v), do: "an array"
  defp kind({_}), do: "an object"

  # Keys come from jiffy, which has checked that they are UTF-8.
  defp printable(key), do: String.slice(key, 0, 64)

  # jiffy raises {Position, Reason} for bad JSON, {range, _} for a number
  # beyond a double's range (e.g. 1e999), whose field it does not tell.
  defp json_error({:range, _}) do
    "the body holds a number beyond the range of a double (like 1e999): field `value` must be a finite number " <>
      "and field `timestamp` an integer 0 <= t < 2^53"
  end

  defp json_error({pos, reason}) when is_integer(pos) do
    what =
      case reason do
        :truncated_json -> "it ends before the JSON value is complete"
        :invalid_trailing_data -> "trailing characters after the JSON value"
        :invalid_string -> "a string that is not valid UTF-8 or has a bad escape"
        :invalid_number -> "a malformed number"
        :invalid_literal -> "a misspelt true, false or null"
        :invalid_json -> "an unexpected character"
        other -> to_string(other)
      end

    "the body is not valid JSON (#{what}, at byte #{pos}); #{@example}"
  end

  defp json_error(other), do: "the body is not valid JSON (#{inspect(other)}); #{@example}"
end
