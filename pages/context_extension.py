import streamlit as st

st.title("context_extension")
st.info("This page is being built.")
