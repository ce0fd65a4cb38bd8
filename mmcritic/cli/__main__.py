"""`python -m mmcritic.cli`, the form `accelerate launch -m mmcritic.cli train RECIPE` needs."""

from mmcritic.cli import main

raise SystemExit(main())
