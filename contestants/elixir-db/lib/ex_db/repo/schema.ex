defmodule ExDb.Repo.Schema do
  @moduledoc """
  Schema modules, as `Ecto.Schema` declares them (a small subset: fields
  with a type, one primary key):

      defmodule Item do
        use ExDb.Repo.Schema

        schema "items" do
          field :id, :integer, primary_key: true
          field :name, :string
          field :price, :integer
        end
      end

  defines the struct `%Item{id: nil, name: nil, price: nil}` and
  `__schema__/1` (`:source`, `:fields`, `:types`, `:primary_key`), which
  `ExDb.Repo` reads to build queries and load rows. Types: `:integer`,
  `:string`.
  """

  defmacro __using__(_opts) do
    quote do
      import ExDb.Repo.Schema, only: [schema: 2]
    end
  end

  defmacro schema(source, do: block) do
    calls =
      case block do
        {:__block__, _, calls} -> calls
        call -> [call]
      end

    fields =
      for {:field, _, [name, type | opts]} <- calls do
        true = type in [:integer, :string]
        {name, type, List.first(opts, [])}
      end

    names = Enum.map(fields, &elem(&1, 0))
    types = Map.new(fields, fn {n, t, _} -> {n, t} end)
    [pk] = for {n, _, o} <- fields, o[:primary_key], do: n

    quote do
      defstruct unquote(names)
      def __schema__(:source), do: unquote(source)
      def __schema__(:fields), do: unquote(names)
      def __schema__(:types), do: unquote(Macro.escape(types))
      def __schema__(:primary_key), do: unquote(pk)
    end
  end
end

defmodule ExDb.Item do
  @moduledoc "The `items` table of db-read, as a schema."
  use ExDb.Repo.Schema

  schema "items" do
    field :id, :integer, primary_key: true
    field :name, :string
    field :price, :integer
  end
end
