defmodule ExDb.Repo.Query do
  @moduledoc """
  A query as data, built with functions (where Ecto has its `from` macro):

      Item |> Query.from() |> Query.where_in(:id, [1, 2]) |> Query.order_by(:id)

  selects every field of the schema. `ExDb.Repo` checks the values against
  the schema's types; an adapter turns the query into its SQL.
  """

  defstruct [:schema, wheres: [], order_bys: []]

  def from(schema) when is_atom(schema), do: %__MODULE__{schema: schema}

  def where_in(%__MODULE__{} = q, field, values) when is_atom(field) and is_list(values),
    do: %{q | wheres: q.wheres ++ [{:in, field, values}]}

  def order_by(%__MODULE__{} = q, field) when is_atom(field), do: %{q | order_bys: q.order_bys ++ [field]}
end
