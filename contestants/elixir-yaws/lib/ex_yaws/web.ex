defmodule ExYaws.Web do
  @moduledoc """
  The Yaws appmod mounted at `/`: Yaws calls `out/1` with its `#arg{}` record
  for every request, and sends what it returns.

  Routes: `POST /events` and `GET|HEAD /events/count`; another method on them
  gets 405 with `Allow`, any other path 404. Every answer is JSON.

  Bodies: Yaws hands over at most `partial_post_size` (64 KiB, set in
  `ExYaws.Application`) at a time. A `Content-Length` over 64 KiB gets 413 at
  once, without the body being parsed (a body of at most 1 MiB is read and
  discarded so that the connection stays usable; a larger one is not read,
  and the connection is closed). A chunked body is gathered with Yaws's
  `{get_more, ...}` until it passes 64 KiB (413, connection closed) or ends.
  """

  require Record
  Record.defrecordp(:arg, Record.extract(:arg, from_lib: "yaws/include/yaws_api.hrl"))
  Record.defrecordp(:headers, Record.extract(:headers, from_lib: "yaws/include/yaws_api.hrl"))
  Record.defrecordp(:http_request, Record.extract(:http_request, from_lib: "yaws/include/yaws_api.hrl"))

  require Logger

  @max_body 65_536
  @drain_limit 1_048_576
  @json ~c"application/json"
  @routes "POST /events, GET /events/count"

  def out(a) do
    route(arg(a, :server_path), http_request(arg(a, :req), :method), a)
  rescue
    e ->
      Logger.error("request failed: " <> Exception.format(:error, e, __STACKTRACE__))
      error(500, "the server failed on this request (#{Exception.message(e)}); this is a bug in the contestant")
  end

  defp route(~c"/events", :POST, a), do: post_event(a)
  defp route(~c"/events", m, _), do: not_allowed("/events", m, ~c"POST")
  defp route(~c"/events/count", m, _) when m in [:GET, :HEAD], do: count()
  defp route(~c"/events/count", m, _), do: not_allowed("/events/count", m, ~c"GET, HEAD")

  defp route(path, m, _),
    do: error(404, "no route for #{method(m)} #{path}; this server answers #{@routes}")

  defp not_allowed(path, m, allow) do
    [{:header, {:allow, allow}} | error(405, "#{path} does not accept #{method(m)}; allowed: #{allow}")]
  end

  defp method(m) when is_atom(m), do: Atom.to_string(m)
  defp method(m), do: List.to_string(m)

  defp post_event(a) do
    h = arg(a, :headers)

    case content_length(h) do
      n when is_integer(n) and n > @max_body and n <= @drain_limit -> [:flush | too_large()]
      n when is_integer(n) and n > @max_body -> close(too_large())
      _ -> gather(a, h)
    end
  end

  # The body: whole, or one chunk of a chunked body at a time.
  defp gather(a, h) do
    acc =
      case arg(a, :state) do
        :undefined -> {[], 0}
        acc -> acc
      end

    case arg(a, :clidata) do
      {:partial, bin} ->
        {parts, size} = acc
        size = size + byte_size(bin)
        if size > @max_body, do: close(too_large()), else: {:get_more, :body, {[bin | parts], size}}

      bin when is_binary(bin) and acc == {[], 0} ->
        handle_event(h, bin)

      bin when is_binary(bin) ->
        {parts, size} = acc

        if size + byte_size(bin) > @max_body,
          do: close(too_large()),
          else: handle_event(h, IO.iodata_to_binary(Enum.reverse([bin | parts])))

      :undefined ->
        handle_event(h, <<>>)
    end
  end

  defp handle_event(h, body) do
    with :ok <- json_content_type(headers(h, :content_type)),
         {:ok, event} <- ExYaws.Event.parse(body) do
      case ExYaws.Store.append(event) do
        {:ok, n} -> count_json(n)
        {:error, {:unstorable, msg}} -> error(400, msg)
        {:error, msg} -> error(503, msg)
      end
    else
      {:error, msg} -> error(400, msg)
    end
  end

  defp count do
    case ExYaws.Store.count() do
      {:ok, n} -> count_json(n)
      {:error, msg} -> error(503, msg)
    end
  end

  defp json_content_type(:undefined),
    do: {:error, "the request has no Content-Type; send Content-Type: application/json"}

  defp json_content_type(ct) do
    [media | _] = :string.split(ct, ~c";")

    if :string.equal(:string.trim(media), @json, true),
      do: :ok,
      else: {:error, "Content-Type must be application/json, got #{inspect(List.to_string(ct))}"}
  end

  defp content_length(h) do
    case headers(h, :content_length) do
      :undefined ->
        nil

      cl ->
        case :string.to_integer(:string.trim(cl)) do
          {n, []} -> n
          _ -> nil
        end
    end
  end

  defp too_large, do: error(413, "the request body is larger than 65536 bytes (64 KiB); send a smaller body")
  defp close(reply), do: [{:header, {:connection, ~c"close"}} | reply]

  defp count_json(n), do: [{:status, 200}, {:content, @json, ["{\"count\":", Integer.to_string(n), "}"]}]

  @doc false
  def error(status, message) do
    [{:status, status}, {:content, @json, :jiffy.encode(%{"error" => message}, [:force_utf8])}]
  end
end
