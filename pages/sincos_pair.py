import streamlit as st

st.title("sincos_pair")
st.info("This page is being built.")
