"""Teammates on other machines: a node's loop, placement of a teammate on a node, the lead's node spawner, node logs
and how `status` sees a node's member. May import team/spawn and team's top."""
