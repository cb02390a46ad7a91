"""torch.utils._pytree (torchjax/utils/_pytree.py) against PyTorch's, on the same trees."""

import collections
import dataclasses

import pytest
import torch.utils._pytree as pt

import torchjax
import torchjax.utils._pytree as tj

Point = collections.namedtuple("Point", "x y")


def trees():
    return [
        1, None, (), [], {}, (1,), [1, None, (2, {"b": 3, "a": 4})],
        {"x": [1, 2], "y": None, "z": ((), [5])},
        Point(1, [2, 3]), collections.OrderedDict(b=1, a=(2, 3)),
        collections.defaultdict(list, a=1, b=[2]), collections.deque([1, (2,)], maxlen=5),
        [Point(x=(1, 2), y={"k": [3]}), "text", 4.5],
    ]


@pytest.mark.parametrize("i", range(13))
def test_flatten_unflatten_and_repr_match_pytorch(i):
    tree = trees()[i]
    leaves, spec = tj.tree_flatten(tree)
    want_leaves, want_spec = pt.tree_flatten(tree)
    assert leaves == want_leaves
    assert repr(spec) == repr(want_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()) == (
        want_spec.num_leaves, want_spec.num_nodes, want_spec.num_children, want_spec.is_leaf())
    back = tj.tree_unflatten(leaves, spec)
    assert back == tree and type(back) is type(tree)
    assert tj.tree_leaves(tree) == pt.tree_leaves(tree)
    assert [(tj.keystr(p), v) for p, v in tj.tree_leaves_with_path(tree)] == [
        (pt.keystr(p), v) for p, v in pt.tree_leaves_with_path(tree)]


def test_map_and_friends_match_pytorch():
    tree = {"a": [1, 2.5, None], "b": (3, "s")}
    for lib in (pt, tj):
        assert lib.tree_map(lambda x: x, tree) == tree
    assert tj.tree_map(lambda x, y: (x, y), [1, (2, 3)], [4, (5, 6)]) == pt.tree_map(
        lambda x, y: (x, y), [1, (2, 3)], [4, (5, 6)])
    assert tj.tree_map_only(int, lambda x: x * 10, tree) == pt.tree_map_only(
        int, lambda x: x * 10, tree)
    assert tj.tree_map_only((int, float), lambda x: -x, tree) == pt.tree_map_only(
        (int, float), lambda x: -x, tree)
    assert tj.tree_all(lambda x: x is not None, tree) == pt.tree_all(
        lambda x: x is not None, tree)
    assert tj.tree_any_only(str, lambda s: s == "s", tree) == pt.tree_any_only(
        str, lambda s: s == "s", tree)
    # a subtree of another tree at a leaf of the first: passed whole
    assert tj.tree_map(lambda a, b: (a, b), [1, 2], [[9], {"k": 8}]) == [(1, [9]), (2, {"k": 8})]
    seen = []
    assert tj.tree_map_(seen.append, tree) is tree and seen == pt.tree_leaves(tree)


def test_tensors_are_leaves():
    x = torchjax.ones(2)
    leaves, spec = tj.tree_flatten({"w": x, "b": [x, None]})
    assert leaves[0] is x and leaves[1] is x and leaves[2] is None and spec.num_leaves == 3
    doubled = tj.tree_map_only(torchjax.Tensor, lambda t: t * 2, {"w": x, "n": 3})
    assert doubled["n"] == 3 and doubled["w"].tolist() == [2.0, 2.0]


def test_registered_nodes_and_errors():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tj.register_pytree_node(Box, lambda b: ([b.a, b.b], None), lambda ch, ctx: Box(*ch))
    leaves, spec = tj.tree_flatten([Box(1, (2, 3))])
    assert leaves == [1, 2, 3]
    back = tj.tree_unflatten([4, 5, 6], spec)
    assert (back[0].a, back[0].b) == (4, (5, 6))
    with pytest.raises(ValueError, match="already registered as pytree node"):
        tj.register_pytree_node(Box, lambda b: ([], None), lambda ch, ctx: Box(0, 0))
    with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
        tj.tree_flatten_with_path(Box(1, 2))
    with pytest.raises(ValueError, match="`leaves` has length 2 but the spec refers to a "
                                         "pytree that holds 3 items"):
        spec.unflatten([1, 2])

    @dataclasses.dataclass
    class Pair:
        left: object
        right: object

    tj.register_dataclass(Pair)
    pairs, spec = tj.tree_flatten_with_path(Pair(1, [2]))
    assert [(tj.keystr(p), v) for p, v in pairs] == [(".left", 1), (".right[0]", 2)]
    assert tj.tree_unflatten([7, 8], spec) == Pair(7, [8])
