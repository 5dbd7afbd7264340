-- Version 6: a module an operator paused is paused on every node. Each node reads this list
-- every second and holds the listed modules' jobs back until an operator resumes the module
-- through any node.
CREATE TABLE paused_modules (
    module text COLLATE "C" PRIMARY KEY,
    -- The node that took the operator's request, and when.
    paused_by text COLLATE "C" NOT NULL,
    paused_at timestamptz NOT NULL
);
