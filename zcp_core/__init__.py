"""zcp: a lab for auditing LLM benchmarks and training data for contamination.

Importing this package is cheap on purpose: heavy dependencies (torch,
transformers, vllm, shap, openai, streamlit) are imported inside the functions
that need them.
"""

__version__ = "0.1.0"
