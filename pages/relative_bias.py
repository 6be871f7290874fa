import streamlit as st

st.title("relative_bias")
st.info("This page is being built.")
